//! A select whose expressions include `explode()`: each exploded list gives
//! one row per element (a null or empty list one null row, as Polars'), and
//! the other columns repeat along it. Lists that split the row count the
//! same way are exploded together; any others are an error.

use arrow_array::cast::AsArray;
use arrow_array::{new_null_array, Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_buffer::OffsetBuffer;
use arrow_schema::DataType;

use super::expr::{evaluate, Expr};
use super::{frame_err, frame_error};
use crate::Result;

/// The list an expression explodes, if it does (explode sits under at most an alias).
fn exploded(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::Explode { expr } => Some(expr),
        Expr::Alias { expr, .. } => exploded(expr),
        _ => None,
    }
}

/// The elements of `list`, one null where a row's list is null or empty.
fn elements(list: &ArrayRef, offsets: &OffsetBuffer<i32>, values: &ArrayRef, dense: bool) -> Result<ArrayRef> {
    let (first, last) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
    if dense {
        return Ok(values.slice(first, last - first));
    }
    // Index len(values) is a null row appended for the empty and null lists.
    let with_null = arrow_select::concat::concat(&[values.as_ref(), new_null_array(values.data_type(), 1).as_ref()]).map_err(frame_err("exploding"))?;
    let null_at = values.len() as u32;
    let mut take = Vec::with_capacity(last - first + 8);
    for i in 0..list.len() {
        let (a, b) = (offsets[i] as u32, offsets[i + 1] as u32);
        if list.is_null(i) || a == b {
            take.push(null_at);
        } else {
            take.extend(a..b);
        }
    }
    arrow_select::take::take(&with_null, &UInt32Array::from(take), None).map_err(frame_err("exploding"))
}

/// The columns of `exprs` over `batch`, exploded and repeated where one explodes.
pub(crate) fn columns(batch: &RecordBatch, exprs: &[Expr]) -> Result<Vec<ArrayRef>> {
    if !exprs.iter().any(|e| exploded(e).is_some()) {
        return exprs.iter().map(|e| evaluate(batch, e)).collect();
    }
    let mut lists: Vec<Option<ArrayRef>> = Vec::with_capacity(exprs.len());
    for e in exprs {
        lists.push(match exploded(e) {
            Some(inner) => {
                let l = evaluate(batch, inner)?;
                if !matches!(l.data_type(), DataType::List(_)) {
                    return Err(frame_error(format!("explode() takes a list column (such as str.split's), not {}", l.data_type())));
                }
                Some(l)
            }
            None => None,
        });
    }
    let first = lists.iter().flatten().next().expect("one explodes").clone();
    let lens = |l: &ArrayRef| -> Vec<(bool, i32)> {
        let o = l.as_list::<i32>().offsets();
        (0..l.len()).map(|i| (l.is_null(i), o[i + 1] - o[i])).collect()
    };
    let shape = lens(&first);
    let dense = shape.iter().all(|&(null, n)| !null && n > 0);
    // Row i repeats once per element of its list (once where the list is null or empty).
    let mut repeat = Vec::new();
    for (i, &(_, n)) in shape.iter().enumerate() {
        repeat.extend(std::iter::repeat_n(i as u32, if dense { n as usize } else { n.max(1) as usize }));
    }
    let repeat = UInt32Array::from(repeat);
    exprs
        .iter()
        .zip(&lists)
        .map(|(e, l)| match l {
            Some(l) => {
                if lens(l) != shape {
                    return Err(frame_error("the exploded lists of one select have different lengths on a row: explode them in separate selects"));
                }
                let list = l.as_list::<i32>();
                elements(l, list.offsets(), list.values(), dense)
            }
            None => arrow_select::take::take(&evaluate(batch, e)?, &repeat, None).map_err(frame_err("repeating rows along an explode")),
        })
        .collect()
}

