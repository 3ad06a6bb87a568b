//! A partition's batches as Arrow IPC stream bytes: the form in which they
//! sit in a worker's SpillBuffer (which compresses them when it spills), cross
//! between workers and reach the client, where apache-arrow's `tableFromIPC`
//! reads them without a copy. The stream always carries the schema, so an
//! empty partition still says what its columns are.

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::SchemaRef;

use super::frame_err;
use crate::Result;

/// The IPC stream of `batches`, all of `schema`.
pub fn encode(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let bytes: usize = batches.iter().map(|b| b.get_array_memory_size()).sum();
    let mut w = StreamWriter::try_new(Vec::with_capacity(bytes + 1024), schema).map_err(frame_err("encoding IPC"))?;
    for b in batches.iter().filter(|b| b.num_rows() > 0) {
        w.write(b).map_err(frame_err("encoding IPC"))?;
    }
    w.into_inner().map_err(frame_err("encoding IPC"))
}

/// The schema and batches of an IPC stream.
pub fn decode(bytes: &[u8]) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let reader = StreamReader::try_new(Cursor::new(bytes), None).map_err(frame_err("decoding IPC"))?;
    let schema = reader.schema();
    let batches = reader.collect::<std::result::Result<Vec<_>, _>>().map_err(frame_err("decoding IPC"))?;
    Ok((Arc::clone(&schema), batches))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    #[test]
    fn round_trips_batches_nulls_and_empty_streams() {
        let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, true), Field::new("v", DataType::Int64, true)]));
        let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(vec![Some("a"), None])), Arc::new(Int64Array::from(vec![None, Some(7)]))]).unwrap();
        let (s, out) = decode(&encode(&schema, &[b.clone(), b.clone()]).unwrap()).unwrap();
        assert_eq!(s, schema);
        assert_eq!(out, vec![b.clone(), b]);
        let (s, out) = decode(&encode(&schema, &[]).unwrap()).unwrap();
        assert_eq!((s, out.len()), (schema, 0));
    }

    #[test]
    fn corrupt_bytes_are_a_coded_error() {
        let e = decode(b"not arrow").unwrap_err();
        assert_eq!(e.code(), "ERR_SPILLWAY_FRAME");
        assert!(e.to_string().contains("decoding IPC"), "{e}");
    }
}
