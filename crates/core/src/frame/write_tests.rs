use super::*;
use crate::frame::read_parquet::{infer_parquet, read_parquet};
use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::{ArrayRef, Decimal128Array, Int64Array, StringArray, TimestampMillisecondArray};
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

fn batch() -> RecordBatch {
    let mut list = ListBuilder::new(Int64Builder::new());
    list.append_value([Some(1), None]);
    list.append_null();
    RecordBatch::try_from_iter(vec![
        ("id", Arc::new(Int64Array::from(vec![Some(1 << 60), None])) as ArrayRef),
        ("s", Arc::new(StringArray::from(vec![Some("a,\"b\""), None])) as ArrayRef),
        ("t", Arc::new(TimestampMillisecondArray::from(vec![1_700_000_000_000, 0]).with_timezone("UTC")) as ArrayRef),
        ("d", Arc::new(Decimal128Array::from(vec![12345, -5]).with_precision_and_scale(9, 3).unwrap()) as ArrayRef),
        ("l", Arc::new(list.finish()) as ArrayRef),
    ])
    .unwrap()
}

fn plan(path: &Path, format: &str) -> String {
    serde_json::json!({ "path": path, "format": format, "compression": "zstd" }).to_string()
}

#[test]
fn parquet_and_ipc_round_trip_every_type_owner_only() {
    let d = tempfile::tempdir().unwrap();
    let b = batch();
    let bytes = ipc::encode(&b.schema(), &[b.clone()]).unwrap();
    for codec in ["none", "snappy", "gzip", "lz4", "zstd", "brotli"] {
        let p = d.path().join(format!("new/dir/{codec}.parquet"));
        let json = serde_json::json!({ "path": p, "format": "parquet", "compression": codec }).to_string();
        assert_eq!(write_partition(&json, &[&bytes]).unwrap(), p.to_string_lossy());
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(p.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        let (schema, _) = infer_parquet(&[p.clone()], None).unwrap();
        let got = read_parquet(&p, &[0], &schema, None).unwrap();
        // Columns as written (the test's batch says some are non-nullable; frames read every column as nullable).
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].columns(), b.columns(), "{codec}");
    }
    let p = d.path().join("x.arrow");
    write_partition(&plan(&p, "ipc"), &[&bytes]).unwrap();
    let r = arrow_ipc::reader::FileReader::try_new(File::open(&p).unwrap(), None).unwrap();
    assert_eq!(r.collect::<std::result::Result<Vec<_>, _>>().unwrap()[0].columns(), b.columns());
    let left: Vec<_> = fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| n.ends_with(".tmp")).collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn csv_and_ndjson_write_text_and_csv_refuses_nested_columns_by_name() {
    let d = tempfile::tempdir().unwrap();
    let b = batch();
    let flat = b.project(&[0, 1]).unwrap();
    let bytes = ipc::encode(&flat.schema(), &[flat]).unwrap();
    let p = d.path().join("a.csv");
    write_partition(&plan(&p, "csv"), &[&bytes]).unwrap();
    assert_eq!(fs::read_to_string(&p).unwrap(), "id,s\n1152921504606846976,\"a,\"\"b\"\"\"\n,\n");
    let p = d.path().join("a.ndjson");
    write_partition(&plan(&p, "ndjson"), &[&bytes]).unwrap();
    assert_eq!(fs::read_to_string(&p).unwrap(), "{\"id\":1152921504606846976,\"s\":\"a,\\\"b\\\"\"}\n{}\n");
    let all = ipc::encode(&b.schema(), &[b]).unwrap();
    let p = d.path().join("n.csv");
    let e = write_partition(&plan(&p, "csv"), &[&all]).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_WRITE");
    assert!(e.to_string().contains("\"l\"") && e.to_string().contains("list<int64>"), "{e}");
    assert!(!p.exists() && fs::read_dir(d.path()).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));
}
