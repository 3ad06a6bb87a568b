//! One value, one key: `-0.0` and `0.0` are the same number (IEEE 754 and
//! DuckDB: `-0.0 = 0.0`, one group, one join match), and every NaN is the same
//! NaN (one group, after every number in a sort). Arrow's comparison kernels
//! and its row format order floats by `total_cmp`, where the two zeros differ
//! and a NaN's sign and payload decide where it goes; so every float column
//! is made canonical before it is compared, keyed, hashed or sorted. The
//! values a frame returns are left as they were.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

#[inline(always)]
pub(crate) fn f64_canonical(v: f64) -> f64 {
    // `+ 0.0` turns -0.0 into 0.0 and leaves every other number as it is.
    if v.is_nan() { f64::NAN } else { v + 0.0 }
}

#[inline(always)]
pub(crate) fn f32_canonical(v: f32) -> f32 {
    if v.is_nan() { f32::NAN } else { v + 0.0 }
}

/// `a` with -0.0 as 0.0 and one NaN, where it is a float column holding
/// either; any other column (or one with neither) as it is, uncopied.
pub(crate) fn canonical(a: &ArrayRef) -> ArrayRef {
    match a.data_type() {
        DataType::Float64 => {
            let p = a.as_primitive::<Float64Type>();
            if p.values().iter().all(|&v| v.to_bits() == f64_canonical(v).to_bits()) {
                return Arc::clone(a);
            }
            Arc::new(p.unary::<_, Float64Type>(f64_canonical))
        }
        DataType::Float32 => {
            let p = a.as_primitive::<Float32Type>();
            if p.values().iter().all(|&v| v.to_bits() == f32_canonical(v).to_bits()) {
                return Arc::clone(a);
            }
            Arc::new(p.unary::<_, Float32Type>(f32_canonical))
        }
        _ => Arc::clone(a),
    }
}

/// Each column of `keys` canonical.
pub(crate) fn canonical_all(keys: &[ArrayRef]) -> Vec<ArrayRef> {
    keys.iter().map(canonical).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int64Array};

    #[test]
    fn negative_zero_and_every_nan_become_one_value_nulls_and_other_columns_stay() {
        let odd_nan = f64::from_bits(0xfff8_0000_0000_0001);
        let a: ArrayRef = Arc::new(Float64Array::from(vec![Some(-0.0), Some(0.0), None, Some(odd_nan), Some(-1.5)]));
        let c = canonical(&a);
        let p = c.as_primitive::<Float64Type>();
        assert_eq!(p.value(0).to_bits(), 0.0f64.to_bits());
        assert!(p.is_null(2));
        assert_eq!(p.value(3).to_bits(), f64::NAN.to_bits());
        assert_eq!(p.value(4), -1.5);
        let plain: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 0.0, f64::NAN]));
        assert!(Arc::ptr_eq(&canonical(&plain), &plain), "nothing to change: not copied");
        let ints: ArrayRef = Arc::new(Int64Array::from(vec![0, -1]));
        assert!(Arc::ptr_eq(&canonical(&ints), &ints));
    }

    use crate::frame::aggregate::{finish, partial, AggExpr, AggSpec};
    use crate::frame::expr::{filter, Expr};
    use crate::frame::partition::SortKey;
    use crate::frame::sort::sort_batches;
    use arrow_array::{RecordBatch, StringArray};
    use arrow_schema::{Field, Schema};

    /// y: -0.0, 0.0, NaN, -NaN (another payload), 1.0; i: the row; s: text keys for the general sort path.
    fn zeros() -> RecordBatch {
        let neg_nan = f64::from_bits(0xfff8_0000_0000_0000);
        let schema = Arc::new(Schema::new(vec![Field::new("y", DataType::Float64, true), Field::new("i", DataType::Int64, false), Field::new("s", DataType::Utf8, false)]));
        RecordBatch::try_new(
            schema,
            vec![Arc::new(Float64Array::from(vec![-0.0, 0.0, f64::NAN, neg_nan, 1.0])), Arc::new(Int64Array::from(vec![0, 1, 2, 3, 4])), Arc::new(StringArray::from(vec!["x"; 5]))],
        )
        .unwrap()
    }

    fn rows_of(b: &RecordBatch) -> Vec<i64> {
        b.column_by_name("i").unwrap().as_primitive::<arrow_array::types::Int64Type>().values().to_vec()
    }

    fn cmp(op: &str, v: &str) -> Expr {
        serde_json::from_str(&format!(r#"{{"op":"{op}","left":{{"op":"col","name":"y"}},"right":{{"op":"lit","value":{v},"type":"float64"}}}}"#)).unwrap()
    }

    #[test]
    fn a_filter_takes_negative_zero_as_zero() {
        let b = zeros();
        assert_eq!(rows_of(&filter(&b, &cmp("eq", "0")).unwrap()), vec![0, 1]);
        assert_eq!(rows_of(&filter(&b, &cmp("eq", "-0.0")).unwrap()), vec![0, 1]);
        assert_eq!(rows_of(&filter(&b, &cmp("lt", "0")).unwrap()), Vec::<i64>::new());
        assert_eq!(rows_of(&filter(&b, &cmp("gtEq", "0")).unwrap()), vec![0, 1, 2, 3, 4], "NaN above every number, as DuckDB");
    }

    #[test]
    fn a_group_by_makes_one_group_of_both_zeros_and_one_of_every_nan() {
        let b = zeros();
        let spec = AggSpec { keys: vec!["y".into()], aggs: vec![AggExpr { name: "n".into(), func: "count".into(), column: None }] };
        let out = finish(&spec, &partial(&spec, &b.schema(), std::slice::from_ref(&b)).unwrap()).unwrap();
        let mut counts: Vec<i64> = out.column_by_name("n").unwrap().as_primitive::<arrow_array::types::Int64Type>().values().to_vec();
        counts.sort_unstable();
        assert_eq!(counts, vec![1, 2, 2], "0 (two rows), NaN (two rows), 1");
    }

    #[test]
    fn a_sort_ties_the_zeros_in_input_order_and_puts_every_nan_last_on_both_paths() {
        let b = zeros();
        let key = |name: &str| SortKey { name: name.into(), descending: false, nulls_last: false };
        // One float key: the inline-key path; with a text key first: arrow-row's.
        for keys in [vec![key("y")], vec![key("s"), key("y")]] {
            // Input order 3 (-NaN), 4 (1.0), 0 (-0.0), 1 (0.0), 2 (NaN).
            let out = sort_batches(&b.schema(), &[b.slice(3, 2), b.slice(0, 3)], &keys).unwrap();
            assert_eq!(rows_of(&out), vec![0, 1, 4, 3, 2], "keys {:?}", keys.iter().map(|k| &k.name).collect::<Vec<_>>());
        }
    }
}
