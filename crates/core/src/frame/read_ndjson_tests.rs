use super::*;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::Array;
use std::io::Write;

fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    File::create(&p).unwrap().write_all(text.as_bytes()).unwrap();
    p
}

fn type_names(s: &Schema) -> Vec<String> {
    super::super::types::to_specs(s).unwrap().into_iter().map(|f| format!("{}:{}", f.name, f.ty)).collect()
}

#[test]
fn infers_nested_types_unified_across_files() {
    let d = tempfile::tempdir().unwrap();
    let a = file(&d, "a.ndjson", "{\"id\":1,\"v\":2,\"tags\":[\"x\"],\"geo\":{\"lat\":1.5}}\n{\"id\":2,\"v\":null,\"tags\":null,\"geo\":null,\"z\":null}\n");
    let b = file(&d, "b.ndjson", "{\"id\":3,\"v\":2.5,\"geo\":{\"lat\":2,\"name\":\"p\"},\"extra\":true}\n\n");
    let s = infer_ndjson_schema(&[a.clone(), b.clone()], None, 1 << 20).unwrap();
    assert_eq!(type_names(&s), ["id:int64", "v:float64", "tags:list<utf8>", r#"geo:struct<"lat": float64, "name": utf8>"#, "z:utf8", "extra:bool"]);
    let got = read_ndjson_block(&a, 0, None, &s).unwrap();
    assert_eq!(got[0].num_rows(), 2);
    assert_eq!(got[0].column(1).as_primitive::<Float64Type>().value(0), 2.0);
    assert!(got[0].column(2).is_null(1) && got[0].column(3).is_null(1));
    assert_eq!(got[0].column(3).as_struct().column(0).as_primitive::<Float64Type>().value(0), 1.5);
    let got = read_ndjson_block(&b, 0, None, &s).unwrap();
    assert_eq!(got[0].column(3).as_struct().column(1).as_string::<i32>().value(0), "p");
    // `columns`: those only, in that order; a key never sampled reads as text.
    let cols = ["v".to_string(), "id".to_string(), "late".to_string()];
    let s = infer_ndjson_schema(&[a.clone(), b], Some(&cols), 1 << 20).unwrap();
    assert_eq!(type_names(&s), ["v:float64", "id:int64", "late:utf8"]);
    let got = read_ndjson_block(&a, 0, None, &s).unwrap();
    assert_eq!(got[0].column(1).as_primitive::<Int64Type>().values().to_vec(), vec![1, 2]);
}

#[test]
fn blocks_split_at_line_ends() {
    let d = tempfile::tempdir().unwrap();
    let text: String = (0..50).map(|i| format!("{{\"i\":{i}}}\n")).collect();
    let a = file(&d, "a.ndjson", &text);
    let s = infer_ndjson_schema(&[a.clone()], None, 1 << 20).unwrap();
    let mut all = Vec::new();
    for start in (0..text.len() as u64).step_by(37) {
        for b in read_ndjson_block(&a, start, Some(start + 37), &s).unwrap() {
            all.extend(b.column(0).as_primitive::<Int64Type>().values().iter().copied());
        }
    }
    assert_eq!(all, (0..50).collect::<Vec<i64>>());
}

#[test]
fn conflicts_and_bad_rows_name_file_line_and_column() {
    let d = tempfile::tempdir().unwrap();
    let a = file(&d, "a.ndjson", "{\"k\":{\"x\":1}}\n");
    let b = file(&d, "b.ndjson", "{\"k\":5}\n");
    let e = infer_ndjson_schema(&[a, b], None, 1 << 20).unwrap_err().to_string();
    assert!(e.contains("b.ndjson") && e.contains("\"k\"") && e.contains("a.ndjson"), "{e}");
    let text = "{\"n\":1,\"g\":{\"y\":2}}\n{\"n\":2,\"g\":{\"y\":3}}\n{\"n\":3,\"g\":{\"y\":{\"deep\":1}}}\n";
    let c = file(&d, "c.ndjson", text);
    let s = infer_ndjson_schema(&[c.clone()], None, 20).unwrap();
    let e = read_ndjson_block(&c, 0, None, &s).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_READ");
    let m = e.to_string();
    assert!(m.contains("c.ndjson") && m.contains("line 3") && m.contains("column \"g.y\""), "{m}");
    let bad = file(&d, "bad.ndjson", "{\"n\":1}\n{\"n\":\n");
    let s = infer_ndjson_schema(&[bad.clone()], None, 8).unwrap();
    let m = read_ndjson_block(&bad, 0, None, &s).unwrap_err().to_string();
    assert!(m.contains("bad.ndjson") && m.contains("line 2"), "{m}");
}

#[test]
fn compressed_files_stream_and_a_bad_line_is_named_by_its_number_in_the_content() {
    let d = tempfile::tempdir().unwrap();
    let n = 400_000u64;
    let mut text: String = (0..n).map(|i| format!("{{\"id\":{i},\"s\":\"row {i}\"}}\n")).collect();
    assert!(text.len() > super::super::read_compressed::PIECE);
    let p = d.path().join("t.ndjson.zst");
    std::fs::write(&p, zstd::encode_all(text.as_bytes(), 1).unwrap()).unwrap();
    let s = infer_ndjson_schema(std::slice::from_ref(&p), None, 1 << 16).unwrap();
    assert_eq!(type_names(&s), ["id:int64", "s:utf8"]);
    let got = read_ndjson_block(&p, 0, Some(1), &s).unwrap();
    assert_eq!(got.iter().map(|b| b.num_rows() as u64).sum::<u64>(), n);
    let ids: i64 = got.iter().map(|b| b.column(0).as_primitive::<Int64Type>().values().iter().sum::<i64>()).sum();
    assert_eq!(ids as u64, n * (n - 1) / 2);
    // A bad value past the first piece: its line number counts the pieces before.
    text.push_str("{\"id\":\"x\",\"s\":\"bad\"}\n");
    let q = d.path().join("bad.ndjson.gz");
    let mut gz = flate2::write::GzEncoder::new(File::create(&q).unwrap(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
    let e = read_ndjson_block(&q, 0, None, &s).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_READ");
    assert!(e.to_string().contains(&format!("bad.ndjson.gz: line {}, column \"id\"", n + 1)), "{e}");
}

#[test]
fn bytes_that_are_not_utf8_are_an_error_naming_the_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("l.ndjson");
    File::create(&p).unwrap().write_all(b"{\"a\":\"ok\"}\n{\"a\":\"caf\xE9\"}\n").unwrap();
    let e = infer_ndjson_schema(&[p.clone()], None, 1 << 20).unwrap_err().to_string();
    assert!(e.contains("line 2: byte 20 is not valid UTF-8; NDJSON is UTF-8: re-encode the file"), "{e}");
    let s = infer_ndjson_schema(&[p.clone()], None, 12).unwrap();
    let e = read_ndjson_block(&p, 0, None, &s).unwrap_err().to_string();
    assert!(e.contains("line 2: bytes that are not valid UTF-8; NDJSON is UTF-8"), "{e}");
}
