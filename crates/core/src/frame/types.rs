//! Schemas as they cross to JS: `[{ name, type, nullable }]` with Arrow's
//! type names as the DESIGN contract spells them ('int64', 'utf8', …).

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use serde::{Deserialize, Serialize};

use super::frame_error;
use crate::Result;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default = "yes")]
    pub nullable: bool,
}

fn yes() -> bool {
    true
}

const TYPES: &[(&str, DataType)] = &[
    ("null", DataType::Null),
    ("bool", DataType::Boolean),
    ("int8", DataType::Int8),
    ("int16", DataType::Int16),
    ("int32", DataType::Int32),
    ("int64", DataType::Int64),
    ("uint8", DataType::UInt8),
    ("uint16", DataType::UInt16),
    ("uint32", DataType::UInt32),
    ("uint64", DataType::UInt64),
    ("float32", DataType::Float32),
    ("float64", DataType::Float64),
    ("utf8", DataType::Utf8),
    ("date32", DataType::Date32),
    ("date64", DataType::Date64),
];

const UNITS: &[(&str, TimeUnit)] = &[("s", TimeUnit::Second), ("ms", TimeUnit::Millisecond), ("us", TimeUnit::Microsecond), ("ns", TimeUnit::Nanosecond)];

/// The contract's name of an Arrow type; `timestamp[ms]` and the like for timestamps.
pub fn type_name(t: &DataType) -> Result<String> {
    if let Some((n, _)) = TYPES.iter().find(|(_, d)| d == t) {
        return Ok((*n).to_string());
    }
    if let DataType::Timestamp(u, None) = t {
        let (n, _) = UNITS.iter().find(|(_, x)| x == u).expect("every unit is listed");
        return Ok(format!("timestamp[{n}]"));
    }
    if let Some(n) = super::type_names::extended_name(t)? {
        return Ok(n);
    }
    Err(frame_error(format!("frames do not handle Arrow type {t} yet")))
}

pub fn data_type(name: &str) -> Result<DataType> {
    if let Some((_, d)) = TYPES.iter().find(|(n, _)| *n == name) {
        return Ok(d.clone());
    }
    if let Some(unit) = name.strip_prefix("timestamp[").and_then(|r| r.strip_suffix(']')) {
        if let Some((_, u)) = UNITS.iter().find(|(n, _)| *n == unit) {
            return Ok(DataType::Timestamp(*u, None));
        }
    }
    if let Some(t) = super::type_names::parse_extended(name) {
        return Ok(t);
    }
    let names: Vec<&str> = TYPES.iter().map(|(n, _)| *n).collect();
    Err(frame_error(format!("unknown column type {name:?}: types are {}, timestamp[s|ms|us|ns], timestamp[us, UTC], decimal128(p, s), binary, list<T>, struct<\"name\": T, …>", names.join(", "))))
}

pub fn to_specs(schema: &Schema) -> Result<Vec<FieldSpec>> {
    schema.fields().iter().map(|f| Ok(FieldSpec { name: f.name().clone(), ty: type_name(f.data_type())?, nullable: f.is_nullable() })).collect()
}

pub fn from_specs(specs: &[FieldSpec]) -> Result<SchemaRef> {
    let fields = specs.iter().map(|f| Ok(Field::new(&f.name, data_type(&f.ty)?, f.nullable))).collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(Schema::new(fields)))
}

pub fn is_integer(t: &DataType) -> bool {
    t.is_integer()
}

pub fn is_numeric(t: &DataType) -> bool {
    t.is_integer() || t.is_floating()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known_ones() {
        for name in ["list<utf8>", "int64", "utf8", "bool", "float64", "timestamp[ms]", "date32"] {
            assert_eq!(type_name(&data_type(name).unwrap()).unwrap(), name);
        }
        let e = data_type("int65").unwrap_err().to_string();
        assert!(e.contains("\"int65\"") && e.contains("int64") && e.contains("utf8"), "{e}");
    }
}
