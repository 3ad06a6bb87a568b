//! Names of the Arrow types that Parquet and NDJSON bring beyond CSV's flat
//! ones, as they cross to JS and back in a frame's schema:
//! `timestamp[us, UTC]`, `decimal128(10, 2)`, `time64[us]`, `binary`,
//! `fixed_size_binary[16]`, `list<int64>`, `struct<"a": int64, "b": utf8>`
//! (field names JSON-quoted, so any name survives the trip). Children of a
//! list or struct are nullable: a name says nothing of nullability.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, TimeUnit};

use super::frame_error;
use super::types::{data_type, type_name};
use crate::Result;

fn unit(u: &TimeUnit) -> &'static str {
    match u {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

fn unit_of(s: &str) -> Option<TimeUnit> {
    Some(match s {
        "s" => TimeUnit::Second,
        "ms" => TimeUnit::Millisecond,
        "us" => TimeUnit::Microsecond,
        "ns" => TimeUnit::Nanosecond,
        _ => return None,
    })
}

/// The name of a type that types.rs does not list, if it has one.
pub fn extended_name(t: &DataType) -> Result<Option<String>> {
    Ok(Some(match t {
        DataType::Float16 => "float16".into(),
        DataType::Binary => "binary".into(),
        DataType::FixedSizeBinary(n) => format!("fixed_size_binary[{n}]"),
        DataType::Timestamp(u, Some(tz)) => format!("timestamp[{}, {tz}]", unit(u)),
        DataType::Time32(u) | DataType::Time64(u) => format!("{}[{}]", if matches!(t, DataType::Time32(_)) { "time32" } else { "time64" }, unit(u)),
        DataType::Decimal128(p, s) => format!("decimal128({p}, {s})"),
        DataType::Decimal256(p, s) => format!("decimal256({p}, {s})"),
        DataType::List(f) => format!("list<{}>", type_name(f.data_type())?),
        DataType::Struct(fs) => {
            let parts = fs.iter().map(|f| Ok(format!("{}: {}", serde_json::to_string(f.name()).expect("a string"), type_name(f.data_type())?))).collect::<Result<Vec<_>>>()?;
            format!("struct<{}>", parts.join(", "))
        }
        _ => return Ok(None),
    }))
}

/// A type as frames keep it: the large, view and dictionary forms that
/// writers choose (Polars' string views, pandas' categoricals) read as the
/// plain form, which apache-arrow in JS reads and the kernels handle.
pub fn normalized(t: &DataType) -> Result<DataType> {
    let item = |f: &Arc<Field>| -> Result<Arc<Field>> { Ok(Arc::new(Field::new(f.name(), normalized(f.data_type())?, true))) };
    Ok(match t {
        DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        DataType::LargeBinary | DataType::BinaryView => DataType::Binary,
        DataType::Dictionary(_, v) => normalized(v)?,
        DataType::List(f) | DataType::LargeList(f) | DataType::ListView(f) | DataType::LargeListView(f) | DataType::FixedSizeList(f, _) => DataType::List(Arc::new(Field::new("item", normalized(f.data_type())?, true))),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(item).collect::<Result<Fields>>()?),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) => DataType::Decimal128(*p, *s),
        DataType::Timestamp(u, Some(tz)) if tz.is_empty() => DataType::Timestamp(*u, None),
        // A map is a list of key/value structs (as Parquet stores it), which the kernels and apache-arrow handle.
        DataType::Map(f, _) => DataType::List(Arc::new(Field::new("item", normalized(f.data_type())?, true))),
        DataType::Union(..) | DataType::RunEndEncoded(..) | DataType::Interval(_) | DataType::Duration(_) => {
            return Err(frame_error(format!("its type is Arrow's {t}, which frames do not read yet; they read integers, floats, bool, utf8, binary, date, time, timestamp, decimal, list, struct and map (as a list of key/value structs). Leave the column out with `columns`, or convert it where the file is written (DuckDB: epoch(col) or col::VARCHAR; pyarrow: cast to int64 or string)")));
        }
        t => {
            // Every other type must have a name to cross to JS.
            type_name(t)?;
            t.clone()
        }
    })
}

/// Splits a struct's fields at the commas outside brackets and quoted names.
fn split_fields(s: &str) -> Vec<&str> {
    let (mut depth, mut quoted, mut escaped, mut from) = (0i32, false, false, 0);
    let mut out = Vec::new();
    for (i, c) in s.char_indices() {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    if !s[from..].trim().is_empty() {
        out.push(s[from..].trim());
    }
    out
}

/// The index of the closing quote of the JSON string that `s` begins with.
fn name_end(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i),
            _ => {}
        }
    }
    None
}

fn inner<'a>(name: &'a str, prefix: &str, open: char, close: char) -> Option<&'a str> {
    let rest = name.strip_prefix(prefix)?;
    (rest.starts_with(open) && rest.ends_with(close)).then(|| &rest[1..rest.len() - 1])
}

/// The type a name from `extended_name` stands for.
pub fn parse_extended(name: &str) -> Option<DataType> {
    let name = name.trim();
    match name {
        "float16" => return Some(DataType::Float16),
        "binary" => return Some(DataType::Binary),
        _ => {}
    }
    if let Some(n) = inner(name, "fixed_size_binary", '[', ']') {
        return n.trim().parse().ok().map(DataType::FixedSizeBinary);
    }
    if let Some(args) = inner(name, "timestamp", '[', ']') {
        let (u, tz) = args.split_once(',')?;
        return Some(DataType::Timestamp(unit_of(u.trim())?, Some(tz.trim().into())));
    }
    for (prefix, wide) in [("time32", false), ("time64", true)] {
        if let Some(u) = inner(name, prefix, '[', ']') {
            let u = unit_of(u.trim())?;
            return Some(if wide { DataType::Time64(u) } else { DataType::Time32(u) });
        }
    }
    for prefix in ["decimal128", "decimal256"] {
        if let Some(args) = inner(name, prefix, '(', ')') {
            let (p, s) = args.split_once(',')?;
            let (p, s) = (p.trim().parse().ok()?, s.trim().parse().ok()?);
            return Some(if prefix == "decimal128" { DataType::Decimal128(p, s) } else { DataType::Decimal256(p, s) });
        }
    }
    if let Some(item) = inner(name, "list", '<', '>') {
        return Some(DataType::List(Arc::new(Field::new("item", data_type(item).ok()?, true))));
    }
    if let Some(body) = inner(name, "struct", '<', '>') {
        let fields = split_fields(body)
            .into_iter()
            .map(|f| {
                let end = name_end(f)?;
                let field_name: String = serde_json::from_str(&f[..=end]).ok()?;
                let ty = f[end + 1..].trim().strip_prefix(':')?.trim();
                Some(Field::new(field_name, data_type(ty).ok()?, true))
            })
            .collect::<Option<Vec<_>>>()?;
        return Some(DataType::Struct(fields.into()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_names_round_trip() {
        for name in ["timestamp[us, UTC]", "decimal128(10, 2)", "time64[us]", "binary", "fixed_size_binary[16]", "list<int64>", "list<list<utf8>>", r#"struct<"a": int64, "b, c>": list<struct<"x": utf8>>, "t": timestamp[ms, +01:00]>"#] {
            let t = data_type(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(type_name(&t).unwrap(), name);
        }
        assert!(data_type("list<int65>").is_err());
        assert!(data_type("struct<a: int64>").is_err(), "unquoted names are refused");
    }

    #[test]
    fn large_view_and_dictionary_forms_read_as_plain_ones() {
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::LargeUtf8));
        assert_eq!(normalized(&dict).unwrap(), DataType::Utf8);
        let big = DataType::LargeList(Arc::new(Field::new("element", DataType::Utf8View, false)));
        assert_eq!(type_name(&normalized(&big).unwrap()).unwrap(), "list<utf8>");
        assert!(normalized(&DataType::Duration(TimeUnit::Second)).unwrap_err().to_string().contains("Duration"));
    }
}
