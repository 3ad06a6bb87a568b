//! Integer arithmetic and the integer conversions under it that fail rather
//! than wrap or null a value silently, as DuckDB's do ("Overflow in addition
//! of INT64"): the error names the expression as the user wrote it, the first
//! row at fault and its values, and says how to get an approximate result.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

use super::expr::Expr;
use super::expr_fns::Arith;
use super::frame_error;
use crate::Result;

/// The expression as the client's API spells it (`col("a").plus(lit(1))`), for messages.
pub(crate) fn describe(e: &Expr) -> String {
    use Expr::*;
    let bin = |l: &Expr, op: &str, r: &Expr| format!("{}.{op}({})", describe(l), describe(r));
    match e {
        Col { name } => format!("col({name:?})"),
        Lit { value, ty } => match (ty.as_str(), value) {
            ("int64", serde_json::Value::String(s)) => format!("lit({s}n)"),
            _ => format!("lit({value})"),
        },
        Plus { left, right } => bin(left, "plus", right),
        Minus { left, right } => bin(left, "minus", right),
        MultiplyBy { left, right } => bin(left, "multiplyBy", right),
        DivideBy { left, right } => bin(left, "divideBy", right),
        Modulo { left, right } => bin(left, "modulo", right),
        Round { expr, decimals } => format!("{}.round({decimals})", describe(expr)),
        DtOffsetBy { expr, by, .. } => format!("{}.dt.offsetBy({by:?})", describe(expr)),
        Alias { expr, name } => format!("{}.alias({name:?})", describe(expr)),
        Cast { expr, ty } => format!("{}.cast({ty:?})", describe(expr)),
        FillNull { expr, value } => format!("{}.fillNull({})", describe(expr), describe(value)),
        _ => "an expression".to_string(),
    }
}

/// `l op r` over int64 (either side may be one row, a literal), nulls
/// propagating; the first overflow fails the whole batch. A loop with
/// `checked_*` because arrow-arith's checked kernels are not among the
/// crates built here, and this one pass is all they would do.
pub(crate) fn int64_arith(l: &ArrayRef, r: &ArrayRef, n: usize, op: Arith, expr: &str) -> Result<ArrayRef> {
    let (la, ra) = (l.as_primitive::<Int64Type>(), r.as_primitive::<Int64Type>());
    let spread_nulls = |a: &Int64Array| {
        a.logical_nulls().map(|nb| if a.len() == 1 && n != 1 { if nb.is_null(0) { NullBuffer::new_null(n) } else { NullBuffer::new_valid(n) } } else { nb })
    };
    let nulls = NullBuffer::union(spread_nulls(la).as_ref(), spread_nulls(ra).as_ref());
    let at = |a: &Int64Array, i: usize| a.values()[if a.len() == 1 { 0 } else { i }];
    let (f, sign, word): (fn(i64, i64) -> Option<i64>, &str, &str) = match op {
        Arith::Plus => (i64::checked_add, "+", "addition"),
        Arith::Minus => (i64::checked_sub, "-", "subtraction"),
        // The least int64 % -1 is 0 (only its quotient overflows).
        Arith::Modulo => (|a: i64, b: i64| (b != 0).then(|| a.wrapping_rem(b)), "%", "modulo"),
        _ => (i64::checked_mul, "*", "multiplication"),
    };
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        let (a, b) = (at(la, i), at(ra, i));
        match f(a, b) {
            None if matches!(op, Arith::Modulo) && !nulls.as_ref().is_some_and(|nb| nb.is_null(i)) => {
                return Err(frame_error(format!("division by zero in {expr}: int64 {a} % 0 (row {i} of the partition), as DuckDB's; skip zero divisors with when(...) or cast to float64 for NaN")));
            }
            Some(v) => values.push(v),
            // A null row's slot holds whatever bits were there: its overflow is no overflow.
            None if nulls.as_ref().is_some_and(|nb| nb.is_null(i)) => values.push(0),
            None => {
                return Err(frame_error(format!(
                    "integer overflow in {expr}: {word} of int64 {a} {sign} {b} (row {i} of the partition) passes int64's range (-9223372036854775808..9223372036854775807); cast to float64 first (e.g. col(...).cast('float64')) for an approximate result"
                )))
            }
        }
    }
    Ok(Arc::new(Int64Array::new(values.into(), nulls)))
}

/// An integer column read as int64 for arithmetic or a comparison: a uint64
/// value past int64's range is an error naming it, where Arrow's safe cast
/// would make it null.
pub(crate) fn to_int64(a: &ArrayRef, expr: &str) -> Result<ArrayRef> {
    if a.data_type() == &DataType::UInt64 {
        let u = a.as_primitive::<arrow_array::types::UInt64Type>();
        if let Some((i, v)) = u.iter().enumerate().find_map(|(i, v)| v.filter(|v| *v > i64::MAX as u64).map(|v| (i, v))) {
            return Err(frame_error(format!(
                "{expr}: the uint64 value {v} (row {i} of the partition) does not fit int64, the type integers are read as here; cast to float64 first (e.g. col(...).cast('float64')) for an approximate result"
            )));
        }
    }
    arrow_cast::cast(a, &DataType::Int64).map_err(super::frame_err("casting to int64"))
}

#[cfg(test)]
#[path = "expr_checked_tests.rs"]
mod tests;
