//! Arithmetic, fillNull, cast and the date parts: the numeric and temporal
//! expressions, over the two sides read as one type as comparisons do
//! (integers as int64, any float as float64; a division is always float64,
//! as Polars' `/`).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Date64Type, Float64Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType};
use arrow_array::{Array, ArrayRef, Int32Array, PrimitiveArray, RecordBatch, Scalar};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, TimeUnit};

use super::expr::{as_type, boolean, common_type, eval, spread, Expr, Val};
use super::{expr_checked, frame_err, frame_error, types};
use crate::Result;

#[derive(Clone, Copy)]
pub(crate) enum Arith {
    Plus,
    Minus,
    Times,
    Divide,
    Modulo,
}

fn both<T: arrow_array::ArrowPrimitiveType>(l: &ArrayRef, r: &ArrayRef, n: usize, f: impl Fn(T::Native, T::Native) -> T::Native) -> PrimitiveArray<T> {
    let (l, r) = (l.as_primitive::<T>(), r.as_primitive::<T>());
    let at = |a: &PrimitiveArray<T>, i: usize| a.values()[if a.len() == 1 { 0 } else { i }];
    let nulls = |a: &PrimitiveArray<T>| a.logical_nulls().map(|nb| if a.len() == 1 && n != 1 { if nb.is_null(0) { NullBuffer::new_null(n) } else { NullBuffer::new_valid(n) } } else { nb });
    let values: Vec<T::Native> = (0..n).map(|i| f(at(l, i), at(r, i))).collect();
    PrimitiveArray::<T>::new(values.into(), NullBuffer::union(nulls(l).as_ref(), nulls(r).as_ref()))
}

/// `left op right`, nulls propagating; integer overflow is an error, as DuckDB's.
pub(crate) fn arith(batch: &RecordBatch, whole: &Expr, le: &Expr, re: &Expr, op: Arith) -> Result<Val> {
    let (l, r) = (eval(batch, le)?, eval(batch, re)?);
    let (lt, rt) = (l.array.data_type().clone(), r.array.data_type().clone());
    let numeric = |t: &DataType| types::is_numeric(t) || t == &DataType::Null;
    if !numeric(&lt) || !numeric(&rt) {
        return Err(frame_error(format!("arithmetic takes numbers, not {lt} and {rt}")));
    }
    let mut t = common_type(&lt, &rt)?;
    if matches!(op, Arith::Divide) || !(t.is_integer() || t == DataType::Null) {
        t = DataType::Float64;
    } else {
        t = DataType::Int64;
    }
    let scalar = l.scalar && r.scalar;
    let n = if scalar { 1 } else { batch.num_rows() };
    let (l, r) = (as_type(l, &t, le)?.array, as_type(r, &t, re)?.array);
    let out: ArrayRef = if t == DataType::Int64 {
        expr_checked::int64_arith(&l, &r, n, op, &expr_checked::describe(whole))?
    } else {
        Arc::new(both::<Float64Type>(&l, &r, n, |a, b| match op {
            Arith::Plus => a + b,
            Arith::Minus => a - b,
            Arith::Times => a * b,
            Arith::Divide => a / b,
            // Rust's % on floats is C's fmod, as DuckDB's: x % 0 and ±inf % y are NaN.
            Arith::Modulo => a % b,
        }))
    };
    Ok(Val { array: out, scalar })
}

/// round(x, decimals): integers stay int64 (rounded to a power of ten past
/// a negative `decimals`), floats by DuckDB's own formula, so the two agree
/// on every double (2.675 rounds to 2.67: it is 2.67499999… in binary).
pub(crate) fn round(batch: &RecordBatch, whole: &Expr, e: &Expr, decimals: i32) -> Result<Val> {
    let v = eval(batch, e)?;
    let t = v.array.data_type().clone();
    if t == DataType::Null {
        return Ok(v);
    }
    if !types::is_numeric(&t) {
        return Err(frame_error(format!("round takes numbers, not {t}")));
    }
    let scalar = v.scalar;
    if t.is_integer() {
        let ints = as_type(v, &DataType::Int64, e)?.array;
        if decimals >= 0 {
            return Ok(Val { array: ints, scalar });
        }
        let m = 10i64.checked_pow(decimals.unsigned_abs()).ok_or_else(|| frame_error(format!("{}: 10^{} passes int64's range", expr_checked::describe(whole), -decimals)))?;
        let a = ints.as_primitive::<Int64Type>();
        let mut values = Vec::with_capacity(a.len());
        for (i, &x) in a.values().iter().enumerate() {
            let (q, r) = (x / m, x % m);
            let q = if r.unsigned_abs() * 2 >= m.unsigned_abs() { q + x.signum() } else { q };
            match q.checked_mul(m) {
                Some(y) => values.push(y),
                None if a.is_null(i) => values.push(0),
                None => return Err(frame_error(format!("integer overflow in {}: {x} rounded to a multiple of {m} passes int64's range", expr_checked::describe(whole)))),
            }
        }
        let out = PrimitiveArray::<Int64Type>::new(values.into(), a.nulls().cloned());
        return Ok(Val { array: Arc::new(out), scalar });
    }
    let floats = as_type(v, &DataType::Float64, e)?.array;
    let out: PrimitiveArray<Float64Type> = floats.as_primitive::<Float64Type>().unary(|x| round_f64(x, decimals));
    Ok(Val { array: Arc::new(out), scalar })
}

/// x rounded to `d` decimal places by its exact binary value, halves away
/// from zero (DuckDB's answers: 2.675 is 2.67499999… and rounds to 2.67,
/// though 2.675 * 100 is 267.5 in floating point).
pub(crate) fn round_f64(x: f64, d: i32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let m = 10f64.powi(d.abs());
    let y = if d >= 0 { x * m } else { x / m };
    let r = if (y - y.trunc()).abs() == 0.5 {
        // Landed on a half: only x's own digits say which side it is on (rare, so formatting them exactly costs nothing that matters).
        let s = format!("{:.1100}", x.abs());
        let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
        let p = int.len() as i64 + i64::from(d);
        let up = p >= 0 && int.bytes().chain(frac.bytes()).nth(p as usize).is_some_and(|c| c >= b'5');
        (y.abs().trunc() + if up { 1.0 } else { 0.0 }).copysign(x)
    } else {
        y.round()
    };
    let out = if d >= 0 { r / m } else { r * m };
    if out.is_finite() { out } else { x }
}

/// Nulls of `e` replaced by `value` (both read as their common type).
pub(crate) fn fill_null(batch: &RecordBatch, e: &Expr, value: &Expr) -> Result<Val> {
    let (v, f) = (eval(batch, e)?, eval(batch, value)?);
    let t = common_type(v.array.data_type(), f.array.data_type())?;
    let scalar = v.scalar && f.scalar;
    let n = if scalar { 1 } else { batch.num_rows() };
    let (v, f) = (as_type(v, &t, e)?, as_type(f, &t, value)?);
    let (v, f_scalar) = (spread(v, n)?, f.scalar);
    let Some(nulls) = v.logical_nulls() else { return Ok(Val { array: v, scalar }) };
    let mask = arrow_array::BooleanArray::new(nulls.inner().clone(), None);
    let out = if f_scalar { arrow_select::zip::zip(&mask, &v, &Scalar::new(f.array)) } else { arrow_select::zip::zip(&mask, &v, &f.array) };
    Ok(Val { array: out.map_err(frame_err("filling nulls"))?, scalar })
}

/// CASE WHEN: the two branches read as one type (as fillNull's sides), `then` where the condition is true.
pub(crate) fn when(batch: &RecordBatch, cond: &Expr, then: &Expr, otherwise: &Expr) -> Result<Val> {
    let (c, t, o) = (eval(batch, cond)?, eval(batch, then)?, eval(batch, otherwise)?);
    let ty = common_type(t.array.data_type(), o.array.data_type())?;
    let scalar = c.scalar && t.scalar && o.scalar;
    let n = if scalar { 1 } else { batch.num_rows() };
    let (t, o) = (as_type(t, &ty, then)?, as_type(o, &ty, otherwise)?);
    let c_scalar = c.scalar;
    let mask = boolean(&c, "when")?;
    // A null condition is not true: SQL's CASE takes the ELSE branch.
    let mask = if mask.null_count() > 0 { arrow_select::filter::prep_null_mask_filter(&mask) } else { mask };
    let mask = if c_scalar && n != 1 { spread(Val { array: Arc::new(mask), scalar: true }, n)?.as_boolean().clone() } else { mask };
    let out = match (t.scalar && n != 1, o.scalar && n != 1) {
        (true, true) => arrow_select::zip::zip(&mask, &Scalar::new(t.array), &Scalar::new(o.array)),
        (true, false) => arrow_select::zip::zip(&mask, &Scalar::new(t.array), &o.array),
        (false, true) => arrow_select::zip::zip(&mask, &t.array, &Scalar::new(o.array)),
        (false, false) => arrow_select::zip::zip(&mask, &t.array, &o.array),
    };
    Ok(Val { array: out.map_err(frame_err("choosing the branch of a when"))?, scalar })
}

/// Arrow's cast (a string that does not parse is an error naming it, as Polars' strict cast).
pub(crate) fn cast_to(batch: &RecordBatch, e: &Expr, ty: &str) -> Result<Val> {
    let v = eval(batch, e)?;
    let t = types::data_type(ty)?;
    let opts = arrow_cast::CastOptions { safe: false, ..Default::default() };
    let array = arrow_cast::cast_with_options(&v.array, &t, &opts)
        .map_err(|err| frame_error(format!("{}.cast({ty:?}): {err}; cast to a wider type (int64, float64) or clean the values first", expr_checked::describe(e))))?;
    Ok(Val { array, scalar: v.scalar })
}

/// (year, month, day) of days since 1970-01-01 (Howard Hinnant's civil_from_days).
pub(crate) fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Seconds since the epoch of each value, and its unit's sub-second ticks discarded.
fn seconds(a: &ArrayRef) -> Result<PrimitiveArray<Int64Type>> {
    let per = |u: &TimeUnit| match u {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    Ok(match a.data_type() {
        DataType::Date32 => a.as_primitive::<Date32Type>().unary(|d| i64::from(d) * 86_400),
        DataType::Date64 => a.as_primitive::<Date64Type>().unary(|ms| ms.div_euclid(1_000)),
        DataType::Timestamp(u, None) => {
            let k = per(u);
            match u {
                TimeUnit::Second => a.as_primitive::<TimestampSecondType>().unary(|v| v),
                TimeUnit::Millisecond => a.as_primitive::<TimestampMillisecondType>().unary(|v| v.div_euclid(k)),
                TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().unary(|v| v.div_euclid(k)),
                TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().unary(|v| v.div_euclid(k)),
            }
        }
        t => return Err(frame_error(format!("dt takes a date32, date64 or timestamp column, not {t}"))),
    })
}

/// A part of each date or time (UTC): year, month (1–12), day, weekday (1 = Monday … 7, ISO), hour, minute, second.
pub(crate) fn dt(v: Val, part: &str) -> Result<Val> {
    let secs = seconds(&v.array)?;
    let f: fn(i64) -> i64 = match part {
        "year" => |s| civil(s.div_euclid(86_400)).0,
        "month" => |s| civil(s.div_euclid(86_400)).1,
        "day" => |s| civil(s.div_euclid(86_400)).2,
        "weekday" => |s| (s.div_euclid(86_400) + 3).rem_euclid(7) + 1,
        "hour" => |s| s.rem_euclid(86_400) / 3_600,
        "minute" => |s| s.rem_euclid(3_600) / 60,
        "second" => |s| s.rem_euclid(60),
        p => return Err(frame_error(format!("unknown date part {p:?}: year, month, day, weekday, hour, minute, second"))),
    };
    let out: Int32Array = secs.unary(|s| f(s) as i32);
    Ok(Val { array: Arc::new(out), scalar: v.scalar })
}

