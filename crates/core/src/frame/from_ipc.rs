//! `frame.fromArrow`: a table from JS (its IPC stream) cut into partitions
//! of consecutive rows, its types made the ones frames keep (a JS
//! dictionary column reads as its values), on the client once.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_cast::cast;
use arrow_schema::{Field, Schema};

use super::type_names::normalized;
use super::{frame_err, ipc, types};
use crate::Result;

/// The schema (`[{ name, type, nullable }]` JSON) and `n` IPC streams of about equal rows.
pub fn split_ipc(bytes: &[u8], n: usize) -> Result<(String, Vec<Vec<u8>>)> {
    let (schema, batches) = ipc::decode(bytes)?;
    let fields = schema.fields().iter().map(|f| Ok(Field::new(f.name(), normalized(f.data_type())?, true))).collect::<Result<Vec<_>>>()?;
    let target = Arc::new(Schema::new(fields));
    let batches = batches
        .iter()
        .map(|b| {
            let cols = b.columns().iter().zip(target.fields()).map(|(c, f)| if c.data_type() == f.data_type() { Ok(Arc::clone(c)) } else { cast(c, f.data_type()).map_err(frame_err("converting a fromArrow column")) }).collect::<Result<Vec<_>>>()?;
            RecordBatch::try_new(Arc::clone(&target), cols).map_err(frame_err("converting a fromArrow batch"))
        })
        .collect::<Result<Vec<_>>>()?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let n = n.max(1);
    let per = rows.div_ceil(n).max(1);
    let mut parts: Vec<Vec<RecordBatch>> = vec![Vec::new(); n];
    let mut at = 0;
    for b in &batches {
        let mut off = 0;
        while off < b.num_rows() {
            let i = (at / per).min(n - 1);
            let take = (per - at % per).min(b.num_rows() - off);
            parts[i].push(b.slice(off, take));
            (off, at) = (off + take, at + take);
        }
    }
    let encoded = parts.iter().map(|p| ipc::encode(&target, p)).collect::<Result<Vec<_>>>()?;
    let specs = serde_json::to_string(&types::to_specs(&target)?).map_err(frame_err("describing a schema"))?;
    Ok((specs, encoded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::{ArrayRef, DictionaryArray, Int64Array};
    use arrow_array::types::Int32Type;

    #[test]
    fn cuts_rows_across_batches_in_order_and_reads_dictionaries_as_values() {
        let dict: DictionaryArray<Int32Type> = vec!["a", "b", "a"].into_iter().collect();
        let b = RecordBatch::try_from_iter(vec![("v", Arc::new(Int64Array::from(vec![0, 1, 2])) as ArrayRef), ("k", Arc::new(dict) as ArrayRef)]).unwrap();
        let bytes = ipc::encode(&b.schema(), &[b.clone(), b.slice(1, 2)]).unwrap();
        let (schema, parts) = split_ipc(&bytes, 2).unwrap();
        assert_eq!(schema, r#"[{"name":"v","type":"int64","nullable":true},{"name":"k","type":"utf8","nullable":true}]"#);
        let rows: Vec<Vec<i64>> = parts.iter().map(|p| ipc::decode(p).unwrap().1.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect()).collect();
        assert_eq!(rows, vec![vec![0, 1, 2], vec![1, 2]]);
        let (_, parts) = split_ipc(&bytes, 9).unwrap();
        assert_eq!(parts.len(), 9, "more partitions than rows: the rest are empty, with the schema");
    }
}
