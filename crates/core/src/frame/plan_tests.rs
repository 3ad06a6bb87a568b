use super::*;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use std::io::Write;

#[test]
fn csv_to_filter_to_partials_to_result() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.csv");
    std::fs::File::create(&p).unwrap().write_all(b"k,v\na,1\nb,2\na,3\n,4\nb,\n").unwrap();
    let schema = infer_csv(&[p.clone()], "{}", 1 << 20).unwrap();
    assert_eq!(schema, r#"[{"name":"k","type":"utf8","nullable":true},{"name":"v","type":"int64","nullable":true}]"#);
    let agg = r#"{"keys":["k"],"aggs":[{"name":"n","func":"count"},{"name":"s","func":"sum","column":"v"}]}"#;
    let pred = r#"{"op":"gt","left":{"op":"col","name":"v"},"right":{"op":"lit","value":1,"type":"int64"}}"#;
    let part = |start: u64, end: Option<u64>| {
        let plan = format!(r#"{{"source":{{"kind":"csv","path":{:?},"start":{start},"end":{},"options":{{}}}},"schema":{schema},"steps":[{{"kind":"filter","predicate":{pred}}}],"partial":{agg}}}"#, p.to_str().unwrap(), end.map_or("null".into(), |e| e.to_string()));
        run_partition(&plan, &[]).unwrap()
    };
    let (a, b, c) = (part(0, Some(12)), part(12, Some(14)), part(14, None));
    let out = run_combine(&format!(r#"{{"agg":{agg},"final":true}}"#), &[&a, &b, &c]).unwrap();
    let (_, batches) = ipc::decode(&out).unwrap();
    let r = &batches[0];
    let keys: Vec<_> = r.column(0).as_string::<i32>().iter().collect();
    let n: Vec<_> = r.column(1).as_primitive::<Int64Type>().values().to_vec();
    let s: Vec<_> = r.column(2).as_primitive::<Int64Type>().iter().collect();
    let mut rows: Vec<_> = keys.into_iter().zip(n).zip(s).collect();
    rows.sort();
    assert_eq!(rows, vec![((None, 1), Some(4)), ((Some("a"), 1), Some(3)), ((Some("b"), 1), Some(2))]);
}

#[test]
fn a_plan_that_is_not_one_is_a_coded_error() {
    let e = run_partition("{\"source\":{}}", &[]).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_FRAME");
    assert!(e.to_string().contains("frame partition plan"), "{e}");
}

#[test]
fn a_packed_text_partition_reads_its_files_whole_in_order_and_its_steps_run_over_all_of_them() {
    let d = tempfile::tempdir().unwrap();
    let files = [("a.txt", &b"one\r\ntwo"[..]), ("b.txt", &b""[..]), ("c.txt", &b"three\nfour four\n"[..])];
    for (name, bytes) in files {
        std::fs::File::create(d.path().join(name)).unwrap().write_all(bytes).unwrap();
    }
    let path = |n: &str| format!("{:?}", d.path().join(n).to_str().unwrap());
    let plan = format!(
        r#"{{"source":{{"kind":"text","path":{},"start":0,"end":8,"size":8,"mtimeMs":0,"column":"line","encoding":"utf8","more":[{{"path":{},"size":0,"mtimeMs":0}},{{"path":{},"size":16,"mtimeMs":0}}]}},"schema":[{{"name":"line","type":"utf8","nullable":true}}],"steps":[{{"kind":"filter","predicate":{{"op":"neq","left":{{"op":"col","name":"line"}},"right":{{"op":"lit","value":"two","type":"utf8"}}}}}}]}}"#,
        path("a.txt"),
        path("b.txt"),
        path("c.txt")
    );
    let (_, batches) = ipc::decode(&run_partition(&plan, &[]).unwrap()).unwrap();
    let lines: Vec<String> = batches.iter().flat_map(|b| b.column(0).as_string::<i32>().iter().map(|s| s.unwrap().to_string()).collect::<Vec<_>>()).collect();
    assert_eq!(lines, ["one", "three", "four four"]);
}
