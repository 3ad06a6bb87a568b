use super::*;
use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray, StructArray, TimestampMicrosecondArray};
use parquet::arrow::ArrowWriter;
use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;

/// A batch of every kind of column Parquet files bring: INT64, a zoned
/// timestamp, a decimal, a list and a struct, with nulls.
fn every_type(from: i64, n: i64) -> RecordBatch {
    let ids = Int64Array::from_iter((from..from + n).map(|i| (i % 7 != 3).then_some(i)));
    let ts = TimestampMicrosecondArray::from_iter_values((from..from + n).map(|i| 1_700_000_000_000_000 + i)).with_timezone("UTC");
    let dec = Decimal128Array::from_iter_values((from..from + n).map(|i| i as i128 * 100 + 25)).with_precision_and_scale(12, 2).unwrap();
    let mut list = ListBuilder::new(Int64Builder::new());
    for i in from..from + n {
        if i % 5 == 0 {
            list.append_null();
        } else {
            list.append_value((0..i % 3).map(Some));
        }
    }
    let name = Arc::new(StringArray::from_iter_values((from..from + n).map(|i| format!("n{i}")))) as ArrayRef;
    let st = StructArray::from(vec![(Arc::new(Field::new("name", DataType::Utf8, true)), name)]);
    RecordBatch::try_from_iter(vec![
        ("id", Arc::new(ids) as ArrayRef),
        ("ts", Arc::new(ts) as ArrayRef),
        ("price", Arc::new(dec) as ArrayRef),
        ("tags", Arc::new(list.finish()) as ArrayRef),
        ("who", Arc::new(st) as ArrayRef),
    ])
    .unwrap()
}

/// A Parquet file of `batches`, `rows_per_group` rows to a row group.
fn write(dir: &tempfile::TempDir, name: &str, batches: &[RecordBatch], codec: Compression, rows_per_group: usize) -> PathBuf {
    let p = dir.path().join(name);
    let props = WriterProperties::builder().set_compression(codec).set_max_row_group_row_count(Some(rows_per_group)).build();
    let mut w = ArrowWriter::try_new(File::create(&p).unwrap(), batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
    p
}

fn all_groups(path: &Path) -> Vec<usize> {
    let (_, meta) = footer(path).unwrap();
    (0..meta.metadata().num_row_groups()).collect()
}

#[test]
fn reads_every_codec_and_type_with_row_groups_and_projection() {
    let d = tempfile::tempdir().unwrap();
    let codecs = [Compression::UNCOMPRESSED, Compression::SNAPPY, Compression::GZIP(GzipLevel::default()), Compression::LZ4_RAW, Compression::LZ4, Compression::ZSTD(ZstdLevel::default()), Compression::BROTLI(BrotliLevel::default())];
    for (k, codec) in codecs.into_iter().enumerate() {
        let want = every_type(0, 100);
        let p = write(&d, &format!("f{k}.parquet"), &[want.clone()], codec, 30);
        let (schema, layout) = infer_parquet(&[p.clone()], None).unwrap();
        let names: Vec<String> = super::super::types::to_specs(&schema).unwrap().into_iter().map(|f| f.ty).collect();
        assert_eq!(names, ["int64", "timestamp[us, UTC]", "decimal128(12, 2)", "list<int64>", r#"struct<"name": utf8>"#], "{codec:?}");
        assert_eq!(layout[0].iter().map(|g| g.0).collect::<Vec<_>>(), vec![30, 30, 30, 10]);
        let got = read_parquet(&p, &[1, 3], &schema, None).unwrap();
        let ids: Vec<Option<i64>> = got.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().iter().collect::<Vec<_>>()).collect();
        let want_ids: Vec<Option<i64>> = (30..60).chain(90..100).map(|i| (i % 7 != 3).then_some(i)).collect();
        assert_eq!(ids, want_ids, "{codec:?}");
        let b = &got[0];
        assert_eq!(b.column(1).as_primitive::<TimestampMicrosecondType>().value(0), 1_700_000_000_000_030);
        assert_eq!(b.column(2).as_primitive::<Decimal128Type>().value(0), 3025);
        let tags = b.column(3).as_list::<i32>();
        assert!(tags.is_null(5), "row 35 is a null list");
        assert_eq!(tags.value(1).as_primitive::<Int64Type>().values().to_vec(), vec![0]);
        assert_eq!(b.column(4).as_struct().column(0).as_string::<i32>().value(2), "n32");
    }
    // Projection: only the columns asked for, in the order asked.
    let p = d.path().join("f1.parquet");
    let cols = ["who".to_string(), "id".to_string()];
    let (schema, _) = infer_parquet(&[p.clone()], Some(&cols)).unwrap();
    let got = read_parquet(&p, &all_groups(&p), &schema, None).unwrap();
    assert_eq!(got[0].schema().fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["who", "id"]);
    let e = infer_parquet(&[p], Some(&["nope".to_string()])).unwrap_err().to_string();
    assert!(e.contains("f1.parquet") && e.contains("\"nope\"") && e.contains("\"price\""), "{e}");
}

#[test]
fn unifies_integer_widths_across_files_and_names_conflicts() {
    let d = tempfile::tempdir().unwrap();
    let a = write(&d, "a.parquet", &[RecordBatch::try_from_iter(vec![("v", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef), ("s", Arc::new(StringArray::from(vec!["x", "y"])) as ArrayRef)]).unwrap()], Compression::SNAPPY, 10);
    let b = write(&d, "b.parquet", &[RecordBatch::try_from_iter(vec![("s", Arc::new(StringArray::from(vec!["z"])) as ArrayRef), ("v", Arc::new(Int64Array::from(vec![1 << 40])) as ArrayRef)]).unwrap()], Compression::SNAPPY, 10);
    let (schema, _) = infer_parquet(&[a.clone(), b.clone()], None).unwrap();
    assert_eq!(schema.field(0).data_type(), &DataType::Int64);
    let got = read_parquet(&a, &[0], &schema, None).unwrap();
    assert_eq!(got[0].column(0).as_primitive::<Int64Type>().values().to_vec(), vec![1, 2]);
    let c = write(&d, "c.parquet", &[RecordBatch::try_from_iter(vec![("v", Arc::new(StringArray::from(vec!["1"])) as ArrayRef), ("s", Arc::new(StringArray::from(vec!["z"])) as ArrayRef)]).unwrap()], Compression::SNAPPY, 10);
    let e = infer_parquet(&[a, c], None).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_READ");
    assert!(e.to_string().contains("c.parquet") && e.to_string().contains("\"v\""), "{e}");
}

#[test]
fn statistics_skip_row_groups_a_first_filter_rules_out() {
    let d = tempfile::tempdir().unwrap();
    let batch = RecordBatch::try_from_iter(vec![
        ("v", Arc::new(Int64Array::from_iter_values(0..100)) as ArrayRef),
        ("f", Arc::new(Float64Array::from_iter_values((0..100).map(|i| i as f64)) ) as ArrayRef),
        ("s", Arc::new(StringArray::from_iter_values((0..100).map(|i| format!("k{i:03}")))) as ArrayRef),
    ])
    .unwrap();
    let p = write(&d, "s.parquet", &[batch], Compression::SNAPPY, 25);
    let (_, meta) = footer(&p).unwrap();
    let schema = meta.schema().clone();
    let pred = |json: &str| -> Expr { serde_json::from_str(json).unwrap() };
    let kept = |e: &Expr| (0..4).filter(|&i| may_match(meta.metadata().row_group(i), &schema, e)).collect::<Vec<_>>();
    let col = |n: &str| format!(r#"{{"op":"col","name":"{n}"}}"#);
    let int = |v: i64| format!(r#"{{"op":"lit","value":{v},"type":"int64"}}"#);
    assert_eq!(kept(&pred(&format!(r#"{{"op":"gt","left":{},"right":{}}}"#, col("v"), int(60)))), vec![2, 3]);
    assert_eq!(kept(&pred(&format!(r#"{{"op":"gt","left":{},"right":{}}}"#, int(30), col("v")))), vec![0, 1]);
    assert_eq!(kept(&pred(&format!(r#"{{"op":"eq","left":{},"right":{}}}"#, col("v"), int(50)))), vec![2]);
    let s = format!(r#"{{"op":"ltEq","left":{},"right":{{"op":"lit","value":"k010","type":"utf8"}}}}"#, col("s"));
    let both = format!(r#"{{"op":"and","left":{s},"right":{{"op":"lt","left":{},"right":{{"op":"lit","value":2.5,"type":"float64"}}}}}}"#, col("f"));
    assert_eq!(kept(&pred(&both)), vec![0]);
    // A float column may hold NaN, which `gt` keeps: never pruned by it.
    assert_eq!(kept(&pred(&format!(r#"{{"op":"gt","left":{},"right":{}}}"#, col("f"), int(1000)))), vec![0, 1, 2, 3]);
    assert_eq!(kept(&pred(&format!(r#"{{"op":"or","left":{},"right":{}}}"#, col("v"), col("v")))), vec![0, 1, 2, 3]);
    let (s2, _) = infer_parquet(&[p.clone()], None).unwrap();
    let got = read_parquet(&p, &[0, 1, 2, 3], &s2, Some(&pred(&format!(r#"{{"op":"gtEq","left":{},"right":{}}}"#, col("v"), int(75))))).unwrap();
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 25, "only the last row group is read");
}

#[test]
fn a_pushed_down_filter_keeps_the_rows_the_filter_step_keeps_and_decodes_only_what_follows() {
    let d = tempfile::tempdir().unwrap();
    // x as int32 in the file (the frame reads int64), nulls in x and in s.
    let batch = RecordBatch::try_from_iter(vec![
        ("x", Arc::new(Int32Array::from_iter((0..1000).map(|i| (i % 11 != 0).then_some(i % 97)))) as ArrayRef),
        ("s", Arc::new(StringArray::from_iter((0..1000).map(|i| (i % 13 != 0).then(|| format!("c{}", i % 7))))) as ArrayRef),
        ("y", Arc::new(Float64Array::from_iter_values((0..1000).map(|i| i as f64)) ) as ArrayRef),
    ])
    .unwrap();
    let p = write(&d, "f.parquet", &[batch], Compression::SNAPPY, 300);
    let (schema, _) = infer_parquet(&[p.clone()], None).unwrap();
    let groups = all_groups(&p);
    let pred: Expr = serde_json::from_str(r#"{"op":"or","left":{"op":"gt","left":{"op":"col","name":"x"},"right":{"op":"lit","value":80,"type":"int64"}},"right":{"op":"eq","left":{"op":"col","name":"s"},"right":{"op":"lit","value":"c3","type":"utf8"}}}"#).unwrap();
    let want: Vec<RecordBatch> = read_parquet(&p, &groups, &schema, None).unwrap().iter().map(|b| crate::frame::expr::filter(b, &pred).unwrap()).collect();
    let want = arrow_select::concat::concat_batches(&schema, &want).unwrap();
    let scan = scan_parquet(&p, &groups, &schema, Some(&pred), true, None).unwrap();
    assert!(scan.filtered);
    assert_eq!(arrow_select::concat::concat_batches(&scan.schema, &scan.batches).unwrap(), want);
    // Only the columns after it: y, and none of x or s.
    let scan = scan_parquet(&p, &groups, &schema, Some(&pred), true, Some(&["y".to_string()])).unwrap();
    assert_eq!(scan.schema.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["y"]);
    assert_eq!(arrow_select::concat::concat_batches(&scan.schema, &scan.batches).unwrap().column(0), want.column(2));
    // A predicate that does not type-check is left to the filter step, which reports it.
    let bad: Expr = serde_json::from_str(r#"{"op":"gt","left":{"op":"col","name":"s"},"right":{"op":"lit","value":1,"type":"int64"}}"#).unwrap();
    let scan = scan_parquet(&p, &groups, &schema, Some(&bad), true, Some(&["y".to_string()])).unwrap();
    assert!(!scan.filtered);
    assert_eq!(scan.schema, schema, "every column kept for the filter step");
}

#[test]
fn a_partition_of_several_files_reads_their_row_groups_in_order_through_one_filter() {
    let d = tempfile::tempdir().unwrap();
    let file = |name: &str, from: i64| {
        let b = RecordBatch::try_from_iter(vec![
            ("x", Arc::new(Int64Array::from_iter((from..from + 50).map(|i| (i % 9 != 0).then_some(i)))) as ArrayRef),
            ("y", Arc::new(Float64Array::from_iter_values((from..from + 50).map(|i| i as f64 / 2.0))) as ArrayRef),
        ])
        .unwrap();
        write(&d, name, &[b], Compression::ZSTD(ZstdLevel::default()), 20)
    };
    let (a, b) = (file("a.parquet", 0), file("b.parquet", 1000));
    let (schema, _) = infer_parquet(&[a.clone(), b.clone()], None).unwrap();
    let pred: Expr = serde_json::from_str(r#"{"op":"gt","left":{"op":"col","name":"x"},"right":{"op":"lit","value":30,"type":"int64"}}"#).unwrap();
    let want: Vec<f64> = (0..50).chain(1000..1050).filter(|i| i % 9 != 0 && *i > 30 && !(20..40).contains(i)).map(|i| i as f64 / 2.0).collect();
    use crate::frame::read_parquet_files::{scan_files, ParquetPiece};
    // a's row groups 0 and 2 (rows 0-19, 40-49), then all of b's.
    let pieces = [ParquetPiece { path: a.clone(), row_groups: vec![0, 2] }, ParquetPiece { path: b.clone(), row_groups: all_groups(&b) }];
    let scan = scan_files(&pieces.iter().collect::<Vec<_>>(), &schema, Some(&pred), Some(&["y".to_string()])).unwrap();
    assert!(scan.filtered);
    let got: Vec<f64> = scan.batches.iter().flat_map(|b| b.column(0).as_primitive::<arrow_array::types::Float64Type>().values().to_vec()).collect();
    assert_eq!(got, want);
    // A file that changed since: a row group it no longer has names it.
    let gone = [ParquetPiece { path: a, row_groups: vec![0] }, ParquetPiece { path: b.clone(), row_groups: vec![9] }];
    let e = scan_files(&gone.iter().collect::<Vec<_>>(), &schema, None, None).err().unwrap();
    assert_eq!(e.code(), "ERR_SPILLWAY_READ");
    assert!(e.to_string().contains("b.parquet") && e.to_string().contains("not 10"), "{e}");
}

#[test]
fn a_map_column_reads_as_a_list_of_key_value_structs() {
    use arrow_array::builder::{Int32Builder, MapBuilder, StringBuilder};
    // As pyarrow's map_(string, int32) and DuckDB's MAP write it, nulls included.
    let mut m = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    for i in 0..5 {
        if i == 2 {
            m.append(false).unwrap();
            continue;
        }
        m.keys().append_value(format!("k{i}"));
        m.values().append_value(i);
        m.keys().append_value("j");
        m.values().append_null();
        m.append(true).unwrap();
    }
    let b = RecordBatch::try_from_iter(vec![("m", Arc::new(m.finish()) as ArrayRef)]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "map.parquet", &[b], Compression::SNAPPY, 100);
    let (schema, _) = infer_parquet(std::slice::from_ref(&p), None).unwrap();
    assert_eq!(crate::frame::types::type_name(schema.field(0).data_type()).unwrap(), r#"list<struct<"key": utf8, "value": int32>>"#);
    let got = read_parquet(&p, &all_groups(&p), &schema, None).unwrap();
    let l = got[0].column(0).as_list::<i32>();
    assert_eq!((l.len(), l.null_count(), l.value_length(0), l.value_length(3)), (5, 1, 2, 2));
    let s = l.value(3);
    let s = s.as_struct();
    assert_eq!((s.column(0).as_string::<i32>().value(0), s.column(1).as_primitive::<arrow_array::types::Int32Type>().value(0)), ("k3", 3));
    assert!(s.column(1).is_null(1));
}

#[test]
fn row_groups_are_sized_as_arrow_holds_them_not_as_their_encoded_pages() {
    // Columns that dictionary and RLE encodings shrink to almost nothing: a
    // repeated integer, a decimal of few values and a short repeated string.
    let d = tempfile::tempdir().unwrap();
    let n = 100_000;
    let ids = Int64Array::from_iter_values((0..n).map(|i| i / 1000));
    let dec = Decimal128Array::from_iter_values((0..n).map(|i| (i % 50) as i128)).with_precision_and_scale(15, 2).unwrap();
    let s = StringArray::from_iter_values((0..n).map(|i| ["AIR", "MAIL", "SHIP"][i as usize % 3]));
    let b = RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef), ("q", Arc::new(dec) as ArrayRef), ("mode", Arc::new(s) as ArrayRef)]).unwrap();
    let p = write(&d, "enc.parquet", &[b.clone()], Compression::UNCOMPRESSED, n as usize);
    let (_, meta) = footer(&p).unwrap();
    let encoded: i64 = meta.metadata().row_group(0).columns().iter().map(|c| c.uncompressed_size()).sum();
    let (_, layout) = infer_parquet(std::slice::from_ref(&p), None).unwrap();
    let arrow: usize = b.columns().iter().map(|c| c.get_buffer_memory_size()).sum();
    let est = layout[0][0].1 as f64;
    assert!((encoded as f64) < est / 5.0, "the pages ({encoded} B) are far under Arrow's {arrow} B");
    assert!(est > arrow as f64 * 0.8 && est < arrow as f64 * 1.5, "estimate {est} B for Arrow's {arrow} B");
    let (_, only) = infer_parquet(std::slice::from_ref(&p), Some(&["id".to_string()])).unwrap();
    assert!(only[0][0].1 >= (n as u64) * 8 && only[0][0].1 < (n as u64) * 10, "the columns read only: {}", only[0][0].1);
}
