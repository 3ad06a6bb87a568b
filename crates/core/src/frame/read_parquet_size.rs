//! A column chunk's size as Arrow holds it once read, from the footer alone:
//! what a partition of row groups weighs on a worker. Parquet's own
//! "uncompressed size" is of the encoded pages, and dictionary and RLE
//! encodings make it a small fraction of the in-memory size (TPC-H
//! `lineitem`'s `[l_orderkey, l_quantity]` measured 7x under): partitions
//! planned by it were few and large, one worker scanning what two could.

use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::file::metadata::ColumnChunkMetaData;

/// Bytes of Arrow arrays (values, offsets, validity) for this chunk's values;
/// never less than its pages' uncompressed bytes.
pub fn arrow_bytes(c: &ColumnChunkMetaData) -> u64 {
    let values = c.num_values().max(0) as u64;
    let descr = c.column_descr();
    let decimal = matches!(descr.logical_type_ref(), Some(LogicalType::Decimal { .. })) || descr.converted_type() == ConvertedType::DECIMAL;
    let encoded = c.uncompressed_size().max(0) as u64;
    let data = match descr.physical_type() {
        PhysicalType::BOOLEAN => values.div_ceil(8),
        // Arrow reads every Parquet decimal as decimal128.
        _ if decimal => values * 16,
        PhysicalType::INT32 | PhysicalType::FLOAT => values * 4,
        // INT96 is read as a timestamp of 8 bytes.
        PhysicalType::INT64 | PhysicalType::DOUBLE | PhysicalType::INT96 => values * 8,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => values * descr.type_length().max(0) as u64,
        // 4-byte offsets and the strings' own bytes: the writer's size
        // statistics where it kept them, else the pages' bytes.
        PhysicalType::BYTE_ARRAY => values * 4 + c.unencoded_byte_array_data_bytes().map_or(encoded, |b| b.max(0) as u64),
    };
    (data + values.div_ceil(8)).max(encoded)
}
