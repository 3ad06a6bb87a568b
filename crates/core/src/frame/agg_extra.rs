//! The aggregates whose state is more than one number per group, each family
//! in its own file as DataFusion keeps them: std and var (moments that merge
//! by Chan's formula, agg_moments.rs), first, last and nUnique (values kept
//! in arrow's row format, agg_values.rs). The hash aggregation drives them
//! beside its plain folds (aggregate.rs).

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema};

use super::aggregate::{AggExpr, AggSpec};
use super::{agg_moments, agg_values, frame_error};
use crate::Result;

/// A group-by accumulator over whole batches; `groups` has a group id per
/// row (u32::MAX for rows another output partition owns).
pub(crate) trait ExtraAcc: Send {
    fn update(&mut self, b: &RecordBatch, groups: &[u32], ngroups: usize) -> Result<()>;
    /// Its state columns, one row per group.
    fn finish(self: Box<Self>, ngroups: usize) -> Result<Vec<(Field, ArrayRef)>>;
}

pub(crate) const EXTRA: &[&str] = &["nUnique", "first", "last", "std", "var"];

pub(crate) fn is_extra(func: &str) -> bool {
    EXTRA.contains(&func)
}

pub(crate) fn column_of(a: &AggExpr) -> Result<&str> {
    a.column.as_deref().ok_or_else(|| frame_error(format!("{}() needs a column", a.func)))
}

/// The accumulators of `spec`'s extra aggregates, reading a partition's
/// columns (`merging` false) or partial states of `schema`.
pub(crate) fn accumulators(spec: &AggSpec, schema: &Schema, merging: bool) -> Result<Vec<Box<dyn ExtraAcc>>> {
    let mut out: Vec<Box<dyn ExtraAcc>> = Vec::new();
    for a in spec.aggs.iter().filter(|a| is_extra(&a.func)) {
        let input = if merging { a.name.clone() } else { column_of(a)?.to_string() };
        let field = |n: &str| schema.field_with_name(n).map_err(|_| frame_error(format!("no column {n:?} to {}", a.func))).map(|f| f.data_type().clone());
        out.push(match a.func.as_str() {
            "std" | "var" => Box::new(agg_moments::Moments::new(a, schema, merging)?),
            "first" | "last" => Box::new(agg_values::Pick::new(&a.name, &input, field(&input)?, a.func == "first")?),
            _ => {
                let ty = if merging { agg_values::item_type(&field(&input)?)? } else { field(&input)? };
                Box::new(agg_values::Distinct::new(&a.name, &input, ty, merging)?)
            }
        });
    }
    Ok(out)
}

/// An extra aggregate's result from its merged state.
pub(crate) fn finish(a: &AggExpr, state: &RecordBatch) -> Result<ArrayRef> {
    match a.func.as_str() {
        "std" | "var" => agg_moments::finish(&a.name, a.func == "std", state),
        "nUnique" => agg_values::distinct_count(&a.name, state),
        _ => state.column_by_name(&a.name).cloned().ok_or_else(|| frame_error(format!("no state column {:?}", a.name))),
    }
}

#[cfg(test)]
mod tests {
    use crate::frame::aggregate::{finish, merge, partial, AggSpec};
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    fn batch(k: Vec<Option<i64>>, s: Vec<Option<&str>>, x: Vec<Option<f64>>) -> RecordBatch {
        let schema = Schema::new(vec![Field::new("k", DataType::Int64, true), Field::new("s", DataType::Utf8, true), Field::new("x", DataType::Float64, true)]);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(Int64Array::from(k)), Arc::new(StringArray::from(s)), Arc::new(Float64Array::from(x))]).unwrap()
    }

    #[test]
    fn extra_states_merge_to_the_answer_of_one_pass_and_no_keys_is_one_group() {
        let a = batch(vec![Some(1), Some(1), None, Some(2)], vec![None, Some("b"), Some("z"), Some("q")], vec![Some(1.0), Some(2.0), None, Some(5.0)]);
        let b = batch(vec![Some(1), Some(2), Some(1)], vec![Some("a"), Some("q"), Some("b")], vec![Some(4.0), None, None]);
        let empty = batch(vec![], vec![], vec![]);
        for keys in [vec!["k".to_string()], vec![]] {
            let spec: AggSpec = serde_json::from_value(serde_json::json!({ "keys": keys, "aggs": [
                { "name": "u", "func": "nUnique", "column": "s" }, { "name": "f", "func": "first", "column": "s" },
                { "name": "l", "func": "last", "column": "s" }, { "name": "v", "func": "var", "column": "x" }, { "name": "sd", "func": "std", "column": "x" }] }))
            .unwrap();
            let parts: Vec<RecordBatch> = [&a, &empty, &b].iter().map(|p| partial(&spec, &a.schema(), std::slice::from_ref(*p)).unwrap()).collect();
            let merged = finish(&spec, &merge(&spec, &parts[0].schema(), &parts, None).unwrap()).unwrap();
            let row = |k: Option<i64>| if keys.is_empty() { 0 } else { (0..merged.num_rows()).find(|&i| merged.column(0).as_primitive::<Int64Type>().iter().nth(i).unwrap() == k).unwrap() };
            let c = |n: &str| merged.column_by_name(n).unwrap().clone();
            let r = row(Some(1));
            assert_eq!(c("u").as_primitive::<Int64Type>().value(r), if keys.is_empty() { 4 } else { 2 });
            assert_eq!(c("f").as_string::<i32>().value(r), if keys.is_empty() { "b" } else { "b" });
            assert_eq!(c("l").as_string::<i32>().value(r), "b");
            // k = 1: x = 1, 2, 4 → sample variance 7/3; all: 1, 2, 5, 4 → 10/3.
            let v = c("v").as_primitive::<Float64Type>().value(r);
            assert!((v - if keys.is_empty() { 10.0 / 3.0 } else { 7.0 / 3.0 }).abs() < 1e-12, "{v}");
            assert!((c("sd").as_primitive::<Float64Type>().value(r) - v.sqrt()).abs() < 1e-12);
        }
        let spec: AggSpec = serde_json::from_value(serde_json::json!({ "keys": [], "aggs": [{ "name": "n", "func": "count" }, { "name": "s", "func": "sum", "column": "x" }] })).unwrap();
        let none = finish(&spec, &partial(&spec, &a.schema(), &[]).unwrap()).unwrap();
        assert_eq!((none.num_rows(), none.column(0).as_primitive::<Int64Type>().value(0), none.column(1).is_null(0)), (1, 0, true));
    }
}
