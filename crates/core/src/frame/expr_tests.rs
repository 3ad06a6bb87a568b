use super::*;
use arrow_array::types::Int64Type;

fn batch() -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, true), Field::new("v", DataType::Int64, true), Field::new("f", DataType::Float64, true)]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec![Some("a"), Some("b"), None, Some("a")])),
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(4)])),
            Arc::new(Float64Array::from(vec![Some(0.5), Some(2.5), None, Some(-1.0)])),
        ],
    )
    .unwrap()
}

fn parse(json: &str) -> Expr {
    serde_json::from_str(json).unwrap()
}

fn col(n: &str) -> String {
    format!(r#"{{"op":"col","name":"{n}"}}"#)
}

fn lit(v: &str, t: &str) -> String {
    format!(r#"{{"op":"lit","value":{v},"type":"{t}"}}"#)
}

fn bin(op: &str, l: &str, r: &str) -> String {
    format!(r#"{{"op":"{op}","left":{l},"right":{r}}}"#)
}

fn ids(b: &RecordBatch) -> Vec<Option<i64>> {
    b.column_by_name("v").unwrap().as_primitive::<Int64Type>().iter().collect()
}

#[test]
fn comparisons_widen_numbers_and_skip_nulls() {
    let b = batch();
    assert_eq!(ids(&filter(&b, &parse(&bin("gt", &col("v"), &lit("1", "int64")))).unwrap()), vec![Some(3), Some(4)]);
    // An int column against a float literal reads both as float64.
    assert_eq!(ids(&filter(&b, &parse(&bin("ltEq", &col("v"), &lit("3.5", "float64")))).unwrap()), vec![Some(1), Some(3)]);
    assert_eq!(ids(&filter(&b, &parse(&bin("gt", &col("f"), &col("v")))).unwrap()), vec![]);
    assert_eq!(ids(&filter(&b, &parse(&bin("eq", &col("k"), &lit("\"a\"", "utf8")))).unwrap()), vec![Some(1), Some(4)]);
    assert_eq!(ids(&filter(&b, &parse(&bin("neq", &col("k"), &lit("\"a\"", "utf8")))).unwrap()), vec![None]);
    assert_eq!(ids(&filter(&b, &parse(&bin("eq", &col("v"), &lit("\"4\"", "int64")))).unwrap()), vec![Some(4)]);
}

#[test]
fn logic_is_three_valued_and_null_tests_see_nulls() {
    let b = batch();
    let is_null = |c: &str| format!(r#"{{"op":"isNull","expr":{}}}"#, col(c));
    let not = |e: &str| format!(r#"{{"op":"not","expr":{e}}}"#);
    assert_eq!(ids(&filter(&b, &parse(&is_null("k"))).unwrap()), vec![Some(3)]);
    assert_eq!(ids(&filter(&b, &parse(&format!(r#"{{"op":"isNotNull","expr":{}}}"#, col("v")))).unwrap()), vec![Some(1), Some(3), Some(4)]);
    // v > 2 is null on row 1; NOT null stays null, so the row is not kept.
    let gt2 = bin("gt", &col("v"), &lit("2", "int64"));
    assert_eq!(ids(&filter(&b, &parse(&not(&gt2))).unwrap()), vec![Some(1)]);
    // null OR true is true; null AND false is false.
    let k_b = bin("eq", &col("k"), &lit("\"b\"", "utf8"));
    assert_eq!(ids(&filter(&b, &parse(&bin("or", &gt2, &k_b))).unwrap()), vec![None, Some(3), Some(4)]);
    assert_eq!(ids(&filter(&b, &parse(&not(&bin("and", &gt2, &lit("false", "bool"))))).unwrap()), vec![Some(1), None, Some(3), Some(4)]);
    assert_eq!(filter(&b, &parse(&lit("true", "bool"))).unwrap().num_rows(), 4);
}

#[test]
fn select_names_columns_and_errors_say_what_is_wrong() {
    let b = batch();
    let out = select(&b, &[parse(&col("v")), parse(&format!(r#"{{"op":"alias","name":"big","expr":{}}}"#, bin("gt", &col("v"), &lit("2", "int64"))))]).unwrap();
    assert_eq!(out.schema().fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), vec!["v", "big"]);
    assert_eq!(out.column(1).as_boolean().iter().collect::<Vec<_>>(), vec![Some(false), None, Some(true), Some(true)]);
    let e = filter(&b, &parse(&bin("gt", &col("k"), &lit("1", "int64")))).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_FRAME");
    assert!(e.to_string().contains("cannot compare Utf8 with Int64"), "{e}");
    assert!(filter(&b, &parse(&col("nope"))).unwrap_err().to_string().contains("\"nope\""));
    assert!(filter(&b, &parse(&col("v"))).unwrap_err().to_string().contains("filter takes booleans"));
}

#[test]
fn when_takes_then_where_the_condition_is_true_and_otherwise_where_false_or_null() {
    let b = batch();
    let when = |c: &str, t: &str, o: &str| parse(&format!(r#"{{"op":"when","cond":{c},"then":{t},"otherwise":{o}}}"#));
    // v > 2: [false, null, true, true]; a null condition takes the otherwise branch, as SQL's CASE.
    let gt2 = bin("gt", &col("v"), &lit("2", "int64"));
    let out = evaluate(&b, &when(&gt2, &col("f"), &lit("0", "int64"))).unwrap();
    assert_eq!(out.as_primitive::<arrow_array::types::Float64Type>().iter().collect::<Vec<_>>(), vec![Some(0.0), Some(0.0), None, Some(-1.0)]);
    let out = evaluate(&b, &when(&gt2, &lit("\"big\"", "utf8"), &col("k"))).unwrap();
    assert_eq!(out.as_string::<i32>().iter().collect::<Vec<_>>(), vec![Some("a"), Some("b"), Some("big"), Some("big")]);
    // A literal condition over a column; a null otherwise.
    let out = evaluate(&b, &when(&lit("true", "bool"), &col("v"), &lit("null", "null"))).unwrap();
    assert_eq!(out.as_primitive::<Int64Type>().iter().collect::<Vec<_>>(), vec![Some(1), None, Some(3), Some(4)]);
    // Branches of kinds that do not meet are an error naming them.
    assert!(evaluate(&b, &when(&gt2, &col("k"), &col("v"))).is_err());
}
