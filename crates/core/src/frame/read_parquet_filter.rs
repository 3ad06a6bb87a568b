//! A frame's first filter pushed into the Parquet reader as a row filter:
//! the reader decodes the predicate's columns first, and the other columns
//! only for the rows the predicate keeps (dictionary strings are then not
//! materialized for rows dropped at once, and no filter copies the batches
//! afterwards). The predicate is the frame's own expression, evaluated by
//! expr.rs over the columns in the frame's types, so the rows kept are those
//! the filter step would keep (null counts as false in both).

use std::sync::{Arc, Mutex};

use arrow_array::{ArrayRef, BooleanArray, RecordBatch};
use arrow_cast::cast;
use arrow_schema::{ArrowError, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowPredicateFn, RowFilter};
use parquet::arrow::ProjectionMask;
use parquet::schema::types::SchemaDescriptor;

use super::expr::{self, Expr};
use crate::Error;

/// The columns an expression reads, each once, in order of appearance.
pub(crate) fn expr_columns(e: &Expr, out: &mut Vec<String>) {
    use Expr::*;
    match e {
        Col { name } => {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
        Lit { .. } => {}
        Eq { left, right } | Neq { left, right } | Gt { left, right } | GtEq { left, right } | Lt { left, right } | LtEq { left, right } | And { left, right } | Or { left, right } | Plus { left, right } | Minus { left, right } | MultiplyBy { left, right } | DivideBy { left, right } | Modulo { left, right } => {
            expr_columns(left, out);
            expr_columns(right, out);
        }
        FillNull { expr, value } => {
            expr_columns(expr, out);
            expr_columns(value, out);
        }
        When { cond, then, otherwise } => {
            expr_columns(cond, out);
            expr_columns(then, out);
            expr_columns(otherwise, out);
        }
        Not { expr } | IsNull { expr } | IsNotNull { expr } | Alias { expr, .. } | Cast { expr, .. } | StrContains { expr, .. } | StrStartsWith { expr, .. } | StrLower { expr } | StrUpper { expr } | StrLen { expr } | StrSplit { expr, .. } | StrSlice { expr, .. } | Dt { expr, .. } | Explode { expr } | Round { expr, .. } | DtOffsetBy { expr, .. } => expr_columns(expr, out),
    }
}

/// The predicate's columns of a reader's batch as one batch in the frame's types.
fn in_frame_types(b: &RecordBatch, schema: &SchemaRef) -> std::result::Result<RecordBatch, ArrowError> {
    let columns = schema
        .fields()
        .iter()
        .map(|f| {
            let c: &ArrayRef = b.column_by_name(f.name()).ok_or_else(|| ArrowError::SchemaError(format!("no column {:?} in the row filter's batch", f.name())))?;
            if c.data_type() == f.data_type() { Ok(Arc::clone(c)) } else { cast(c, f.data_type()) }
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    RecordBatch::try_new(Arc::clone(schema), columns)
}

/// An error the predicate raised, kept with its code for the reader's caller.
pub(crate) type Raised = Arc<Mutex<Option<Error>>>;

/// `predicate` as a row filter over a file whose top-level columns are
/// `file_schema` (`descr` its Parquet schema), reading them in the frame's
/// types (`frame_schema`). None when the predicate does not evaluate over an
/// empty batch of those columns (an unknown column, a type mismatch): the
/// filter step then runs after the read and reports it as it would.
pub(crate) fn row_filter(predicate: &Expr, frame_schema: &Schema, file_schema: &Schema, descr: &SchemaDescriptor) -> Option<(RowFilter, Raised)> {
    let mut names = Vec::new();
    expr_columns(predicate, &mut names);
    // A predicate of no column (lit(1).eq(0)) has no rows of its own to read: arrow's reader
    // refuses an empty projection, so it runs after the read, on the rows' count.
    if names.is_empty() {
        return None;
    }
    let fields = names.iter().map(|n| frame_schema.field_with_name(n).ok().cloned()).collect::<Option<Vec<_>>>()?;
    let roots = names.iter().map(|n| file_schema.index_of(n).ok()).collect::<Option<Vec<_>>>()?;
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    expr::filter(&RecordBatch::new_empty(Arc::clone(&schema)), predicate).ok()?;
    let raised: Raised = Arc::default();
    let (keep, pred) = (Arc::clone(&raised), predicate.clone());
    let f = ArrowPredicateFn::new(ProjectionMask::roots(descr, roots), move |b: RecordBatch| {
        let b = in_frame_types(&b, &schema)?;
        let mask = expr::evaluate(&b, &pred).and_then(|a| {
            a.as_any().downcast_ref::<BooleanArray>().cloned().ok_or_else(|| super::frame_error(format!("a filter's predicate made {}, not booleans", a.data_type())))
        });
        mask.map_err(|e| {
            let message = e.to_string();
            *keep.lock().expect("not poisoned") = Some(e);
            ArrowError::ComputeError(message)
        })
    });
    Some((RowFilter::new(vec![Box::new(f)]), raised))
}
