//! Expressions over a batch, as the client builds them (plain data, checked
//! there against the schema): columns, literals, comparisons, Kleene logic
//! and null tests, evaluated with arrow-rs's vectorized kernels; then the
//! filter and select that use them.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{new_null_array, Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt32Array};
use arrow_buffer::NullBuffer;
use arrow_cast::cast;
use arrow_ord::cmp;
use arrow_schema::{DataType, Field, Schema};
use serde::Deserialize;
use serde_json::Value;

use super::{expr_checked, expr_fns, expr_str, frame_err, frame_error};
use crate::Result;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Expr {
    Col { name: String },
    /// `type` is the client's reading of the JS value; bigints arrive as strings.
    Lit { value: Value, #[serde(rename = "type")] ty: String },
    Eq { left: Box<Expr>, right: Box<Expr> },
    Neq { left: Box<Expr>, right: Box<Expr> },
    Gt { left: Box<Expr>, right: Box<Expr> },
    GtEq { left: Box<Expr>, right: Box<Expr> },
    Lt { left: Box<Expr>, right: Box<Expr> },
    LtEq { left: Box<Expr>, right: Box<Expr> },
    And { left: Box<Expr>, right: Box<Expr> },
    Or { left: Box<Expr>, right: Box<Expr> },
    Not { expr: Box<Expr> },
    IsNull { expr: Box<Expr> },
    IsNotNull { expr: Box<Expr> },
    Alias { expr: Box<Expr>, name: String },
    Plus { left: Box<Expr>, right: Box<Expr> },
    Minus { left: Box<Expr>, right: Box<Expr> },
    MultiplyBy { left: Box<Expr>, right: Box<Expr> },
    DivideBy { left: Box<Expr>, right: Box<Expr> },
    /// The truncated division's remainder (the dividend's sign), as SQL's %.
    Modulo { left: Box<Expr>, right: Box<Expr> },
    /// Halves away from zero, to `decimals` places (negative: tens, hundreds, …), as DuckDB's round.
    Round { expr: Box<Expr>, decimals: i32 },
    /// A date or timestamp moved by months, then days, then milliseconds (`by` is the client's spelling).
    DtOffsetBy { expr: Box<Expr>, by: String, months: i64, days: i64, ms: i64 },
    FillNull { expr: Box<Expr>, value: Box<Expr> },
    Cast { expr: Box<Expr>, #[serde(rename = "type")] ty: String },
    /// `regex`: `pattern` is a regex crate pattern (the client translated a JS RegExp), else a literal.
    StrContains { expr: Box<Expr>, pattern: String, #[serde(default)] regex: bool },
    StrStartsWith { expr: Box<Expr>, prefix: String },
    StrLower { expr: Box<Expr> },
    StrUpper { expr: Box<Expr> },
    StrLen { expr: Box<Expr> },
    StrSplit { expr: Box<Expr>, pattern: String, #[serde(default)] regex: bool },
    StrSlice { expr: Box<Expr>, offset: i64, #[serde(default)] length: Option<u64> },
    /// `part`: year, month, day, weekday, hour, minute, second.
    Dt { expr: Box<Expr>, part: String },
    /// Only at the top of a select's expression (under an alias): the other columns repeat.
    Explode { expr: Box<Expr> },
    /// SQL's CASE WHEN: `then` where `cond` is true, else `otherwise` (a null condition is not true).
    When { cond: Box<Expr>, then: Box<Expr>, otherwise: Box<Expr> },
}

/// A value of an expression: a column as long as the batch, or a literal (one row).
pub(crate) struct Val {
    pub(crate) array: ArrayRef,
    pub(crate) scalar: bool,
}

fn literal(value: &Value, ty: &str) -> Result<ArrayRef> {
    let bad = || frame_error(format!("literal {value} is not a {ty}"));
    Ok(match ty {
        "null" => new_null_array(&DataType::Null, 1),
        "int64" => {
            let v = match value {
                Value::String(s) => s.parse::<i64>().map_err(|_| bad())?,
                v => v.as_i64().ok_or_else(bad)?,
            };
            Arc::new(Int64Array::from(vec![v]))
        }
        "float64" => Arc::new(Float64Array::from(vec![value.as_f64().ok_or_else(bad)?])),
        "utf8" => Arc::new(StringArray::from(vec![value.as_str().ok_or_else(bad)?])),
        "bool" => Arc::new(BooleanArray::from(vec![value.as_bool().ok_or_else(bad)?])),
        _ => return Err(frame_error(format!("literals of type {ty:?} are not handled: use a number, bigint, string, boolean or null"))),
    })
}

/// The type both sides of a comparison are read as.
pub(crate) fn common_type(l: &DataType, r: &DataType) -> Result<DataType> {
    Ok(match (l, r) {
        _ if l == r => l.clone(),
        (DataType::Null, t) | (t, DataType::Null) => t.clone(),
        _ if l.is_integer() && r.is_integer() => DataType::Int64,
        _ if (l.is_integer() || l.is_floating()) && (r.is_integer() || r.is_floating()) => DataType::Float64,
        _ => return Err(frame_error(format!("cannot compare {l} with {r}"))),
    })
}

/// `v` (the value of `e`) read as `t`; a uint64 past int64's range is an error, not a null.
pub(crate) fn as_type(v: Val, t: &DataType, e: &Expr) -> Result<Val> {
    if v.array.data_type() == t {
        return Ok(v);
    }
    if t == &DataType::Int64 {
        return Ok(Val { array: expr_checked::to_int64(&v.array, &expr_checked::describe(e))?, scalar: v.scalar });
    }
    Ok(Val { array: cast(&v.array, t).map_err(frame_err("casting for a comparison"))?, scalar: v.scalar })
}

fn compare(batch: &RecordBatch, le: &Expr, re: &Expr, f: fn(&dyn arrow_array::Datum, &dyn arrow_array::Datum) -> std::result::Result<BooleanArray, arrow_schema::ArrowError>) -> Result<Val> {
    let (l, r) = (eval(batch, le)?, eval(batch, re)?);
    let t = common_type(l.array.data_type(), r.array.data_type())?;
    let (l, r) = (as_type(l, &t, le)?, as_type(r, &t, re)?);
    // Arrow compares floats by total_cmp: -0.0 < 0.0 and NaN = NaN only for one NaN.
    let canon = |v: Val| Val { array: super::canonical::canonical(&v.array), scalar: v.scalar };
    let (l, r) = (canon(l), canon(r));
    let scalar = l.scalar && r.scalar;
    let wrap = |v: &Val| -> Box<dyn arrow_array::Datum> { if v.scalar { Box::new(arrow_array::Scalar::new(Arc::clone(&v.array))) } else { Box::new(Arc::clone(&v.array)) } };
    let out = if scalar { f(&l.array, &r.array) } else { f(wrap(&l).as_ref(), wrap(&r).as_ref()) };
    Ok(Val { array: Arc::new(out.map_err(frame_err("comparing"))?), scalar })
}

pub(crate) fn boolean(v: &Val, what: &str) -> Result<BooleanArray> {
    match v.array.data_type() {
        DataType::Boolean => Ok(v.array.as_boolean().clone()),
        DataType::Null => Ok(BooleanArray::new_null(v.array.len())),
        t => Err(frame_error(format!("{what} takes booleans, not {t}"))),
    }
}

/// One row broadcast to `n` (a literal meeting a column).
pub(crate) fn spread(v: Val, n: usize) -> Result<ArrayRef> {
    if !v.scalar || v.array.len() == n {
        return Ok(v.array);
    }
    arrow_select::take::take(&v.array, &UInt32Array::from(vec![0u32; n]), None).map_err(frame_err("broadcasting a literal"))
}

/// SQL's three-valued AND / OR over validity and value bits.
fn kleene(l: &BooleanArray, r: &BooleanArray, and: bool) -> BooleanArray {
    let (lv, rv) = (l.values(), r.values());
    let all = |a: &BooleanArray| a.nulls().map(|n| n.inner().clone()).unwrap_or_else(|| arrow_buffer::BooleanBuffer::new_set(a.len()));
    let (lk, rk) = (all(l), all(r));
    // A known false (AND) or known true (OR) on either side decides the row.
    let (ld, rd) = if and { (&lk & &!lv, &rk & &!rv) } else { (&lk & lv, &rk & rv) };
    let valid = &(&(&lk & &rk) | &ld) | &rd;
    let values = if and { lv & rv } else { &(&lk & lv) | &(&rk & rv) };
    BooleanArray::new(values, Some(NullBuffer::new(valid)))
}

fn logic(batch: &RecordBatch, l: &Expr, r: &Expr, and: bool) -> Result<Val> {
    let (l, r) = (eval(batch, l)?, eval(batch, r)?);
    let scalar = l.scalar && r.scalar;
    let n = if scalar { 1 } else { batch.num_rows() };
    let what = if and { "and" } else { "or" };
    let (l, r) = (boolean(&Val { array: spread(l, n)?, scalar }, what)?, boolean(&Val { array: spread(r, n)?, scalar }, what)?);
    Ok(Val { array: Arc::new(kleene(&l, &r, and)), scalar })
}

fn null_test(batch: &RecordBatch, e: &Expr, want_null: bool) -> Result<Val> {
    let v = eval(batch, e)?;
    let n = v.array.len();
    let valid = v.array.logical_nulls().map(|b| b.inner().clone()).unwrap_or_else(|| arrow_buffer::BooleanBuffer::new_set(n));
    let bits = if want_null { !&valid } else { valid };
    Ok(Val { array: Arc::new(BooleanArray::new(bits, None)), scalar: v.scalar })
}

pub(crate) fn eval(batch: &RecordBatch, e: &Expr) -> Result<Val> {
    use Expr::*;
    Ok(match e {
        Col { name } => {
            let array = batch.column_by_name(name).ok_or_else(|| frame_error(format!("no column {name:?} in this partition")))?;
            Val { array: Arc::clone(array), scalar: false }
        }
        Lit { value, ty } => Val { array: literal(value, ty)?, scalar: true },
        Eq { left, right } => compare(batch, left, right, cmp::eq)?,
        Neq { left, right } => compare(batch, left, right, cmp::neq)?,
        Gt { left, right } => compare(batch, left, right, cmp::gt)?,
        GtEq { left, right } => compare(batch, left, right, cmp::gt_eq)?,
        Lt { left, right } => compare(batch, left, right, cmp::lt)?,
        LtEq { left, right } => compare(batch, left, right, cmp::lt_eq)?,
        And { left, right } => logic(batch, left, right, true)?,
        Or { left, right } => logic(batch, left, right, false)?,
        Not { expr } => {
            let v = eval(batch, expr)?;
            let b = boolean(&v, "not")?;
            Val { array: Arc::new(BooleanArray::new(!b.values(), b.nulls().cloned())), scalar: v.scalar }
        }
        IsNull { expr } => null_test(batch, expr, true)?,
        IsNotNull { expr } => null_test(batch, expr, false)?,
        Alias { expr, .. } => eval(batch, expr)?,
        Plus { left, right } => expr_fns::arith(batch, e, left, right, expr_fns::Arith::Plus)?,
        Minus { left, right } => expr_fns::arith(batch, e, left, right, expr_fns::Arith::Minus)?,
        MultiplyBy { left, right } => expr_fns::arith(batch, e, left, right, expr_fns::Arith::Times)?,
        DivideBy { left, right } => expr_fns::arith(batch, e, left, right, expr_fns::Arith::Divide)?,
        Modulo { left, right } => expr_fns::arith(batch, e, left, right, expr_fns::Arith::Modulo)?,
        Round { expr, decimals } => expr_fns::round(batch, e, expr, *decimals)?,
        DtOffsetBy { expr, months, days, ms, .. } => super::expr_offset::offset_by(eval(batch, expr)?, *months, *days, *ms)?,
        FillNull { expr, value } => expr_fns::fill_null(batch, expr, value)?,
        Cast { expr, ty } => expr_fns::cast_to(batch, expr, ty)?,
        Dt { expr, part } => expr_fns::dt(eval(batch, expr)?, part)?,
        When { cond, then, otherwise } => expr_fns::when(batch, cond, then, otherwise)?,
        Explode { .. } => return Err(frame_error("explode() goes last in a select or withColumns expression (before alias)")),
        e => expr_str::eval_str(batch, e)?,
    })
}

/// The column an expression makes, as long as the batch.
pub fn evaluate(batch: &RecordBatch, e: &Expr) -> Result<ArrayRef> {
    spread(eval(batch, e)?, batch.num_rows())
}

/// The rows where `predicate` is true (null counts as false, as in SQL's WHERE).
pub fn filter(batch: &RecordBatch, predicate: &Expr) -> Result<RecordBatch> {
    let mask = boolean(&Val { array: evaluate(batch, predicate)?, scalar: false }, "filter")?;
    arrow_select::filter::filter_record_batch(batch, &mask).map_err(frame_err("filtering"))
}

/// The name an expression's column goes by: its column's, or its alias.
pub fn output_name(e: &Expr) -> Result<String> {
    match e {
        Expr::Col { name } | Expr::Alias { name, .. } => Ok(name.clone()),
        Expr::Explode { expr } => output_name(expr),
        e => Err(frame_error(format!("{e:?} needs a name: add .alias(name)"))),
    }
}

/// A batch of `exprs`' columns; with an explode among them, the others repeat along its lists.
pub fn select(batch: &RecordBatch, exprs: &[Expr]) -> Result<RecordBatch> {
    let columns = super::explode::columns(batch, exprs)?;
    let rows = columns.first().map_or(batch.num_rows(), |c| c.len());
    let fields = exprs.iter().zip(&columns).map(|(e, c)| Ok(Field::new(output_name(e)?, c.data_type().clone(), true))).collect::<Result<Vec<_>>>()?;
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &opts).map_err(frame_err("selecting"))
}

#[cfg(test)]
#[path = "expr_tests.rs"]
mod tests;
