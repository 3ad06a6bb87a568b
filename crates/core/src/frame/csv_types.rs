//! How the column types inferred from each CSV file's sample meet in one
//! frame schema. The rules are DuckDB's and Polars' where a value can be read
//! as either side without loss (integers with floats make float64, a date
//! with a timestamp a timestamp, any type with text text, a column empty in
//! one sample takes the other's type); any other pair (a date and a bool, an
//! integer and a timestamp) is an error naming both files and the column, so
//! that a file does not silently turn a column into text.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_csv::reader::Format;
use arrow_csv::ReaderBuilder;
use arrow_schema::{DataType, Field, Schema, TimeUnit};

use super::read::read_err;
use super::types::type_name;
use crate::Result;

fn finer(a: TimeUnit, b: TimeUnit) -> TimeUnit {
    let rank = |u: TimeUnit| match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 1,
        TimeUnit::Microsecond => 2,
        TimeUnit::Nanosecond => 3,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// The type two samples' column types share, or None where no type holds both without loss.
pub(crate) fn unify(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (Null, t) | (t, Null) => t.clone(),
        (Utf8, _) | (_, Utf8) => Utf8,
        (Int64, Float64) | (Float64, Int64) => Float64,
        (Date32, Timestamp(u, None)) | (Timestamp(u, None), Date32) => Timestamp(*u, None),
        (Timestamp(u, None), Timestamp(v, None)) => Timestamp(finer(*u, *v), None),
        _ => return None,
    })
}

fn name_of(t: &DataType) -> String {
    type_name(t).unwrap_or_else(|_| t.to_string())
}

/// Each file's sampled columns merged into one schema. Columns in `given`
/// (typed by the user's schema) are not unified: their type is the user's.
pub(crate) fn unify_files(files: &[(PathBuf, Vec<Field>)], given: &[String]) -> Result<Option<Vec<Field>>> {
    let Some((first, head)) = files.first() else { return Ok(None) };
    let names = |fs: &[Field]| fs.iter().map(|f| f.name().as_str()).collect::<Vec<_>>().join(", ");
    // Per column: its type so far and the file that gave it (for the error naming both).
    let mut merged: Vec<(Field, &Path)> = head.iter().map(|f| (f.clone().with_nullable(true), first.as_path())).collect();
    for (path, fields) in &files[1..] {
        if fields.len() != head.len() || head.iter().zip(fields).any(|(a, b)| a.name() != b.name()) {
            return Err(read_err(path, format!("its columns [{}] differ from those of {} [{}]: every file of a frame has the same columns", names(fields), first.display(), names(head))));
        }
        for ((field, from), next) in merged.iter_mut().zip(fields) {
            if given.iter().any(|g| g == field.name()) {
                continue;
            }
            match unify(field.data_type(), next.data_type()) {
                Some(t) => {
                    if field.data_type() == &DataType::Null {
                        *from = path.as_path();
                    }
                    *field = field.clone().with_data_type(t);
                }
                None => {
                    let (had, got) = (name_of(field.data_type()), name_of(next.data_type()));
                    return Err(read_err(
                        path,
                        format!(
                            "column {:?} samples as {got} here but as {had} in {}, types that do not unify: give its type in `schema` (e.g. {{ {:?}: 'utf8' }}), or fix the file",
                            field.name(),
                            from.display(),
                            field.name()
                        ),
                    ));
                }
            }
        }
    }
    Ok(Some(merged.into_iter().map(|(f, _)| f).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_that_hold_both_sides_unify_and_others_do_not() {
        use DataType::*;
        let ms = Timestamp(TimeUnit::Millisecond, None);
        let cases = [
            (Int64, Float64, Some(Float64)),
            (Null, Boolean, Some(Boolean)),
            (Date32, Null, Some(Date32)),
            (Boolean, Utf8, Some(Utf8)),
            (Utf8, Date32, Some(Utf8)),
            (Date32, ms.clone(), Some(ms.clone())),
            (Timestamp(TimeUnit::Second, None), ms.clone(), Some(ms.clone())),
            (Date32, Boolean, None),
            (Int64, Boolean, None),
            (Int64, ms.clone(), None),
        ];
        for (a, b, want) in cases {
            assert_eq!(unify(&a, &b), want, "{a} + {b}");
            assert_eq!(unify(&b, &a), want, "{b} + {a}");
        }
    }

    #[test]
    fn a_conflict_names_the_column_and_both_files_and_a_given_column_is_not_unified() {
        let f = |t: DataType| vec![Field::new("id", DataType::Int64, true), Field::new("day", t, true)];
        let files = vec![(PathBuf::from("/d/a.csv"), f(DataType::Null)), (PathBuf::from("/d/b.csv"), f(DataType::Date32)), (PathBuf::from("/d/c.csv"), f(DataType::Boolean))];
        let e = unify_files(&files, &[]).unwrap_err();
        assert_eq!(e.code(), "ERR_SPILLWAY_READ");
        let m = e.to_string();
        assert!(m.contains("/d/c.csv") && m.contains("\"day\"") && m.contains("as bool here but as date32 in /d/b.csv"), "{m}");
        let ok = unify_files(&files, &["day".to_string()]).unwrap().unwrap();
        assert_eq!(ok[0].data_type(), &DataType::Int64);
    }
}

/// `01234`, `-007`, `00.5`: a number written with a leading zero.
fn leading_zero(v: &str) -> bool {
    let b = v.trim().trim_start_matches(['+', '-']).as_bytes();
    b.len() >= 2 && b[0] == b'0' && b[1].is_ascii_digit()
}

/// The fields inferred from one file's sample, but a numeric column whose
/// sampled values include one with a leading zero (zip codes, ids, account
/// numbers) stays text, as DuckDB's sniffer keeps it: read as a number it
/// would lose its zeros, and `01234` would equal `1234`.
pub(crate) fn keep_leading_zeros(fields: Vec<Field>, sample: &[u8], format: &Format) -> Result<Vec<Field>> {
    let numeric: Vec<usize> = fields.iter().enumerate().filter(|(_, f)| f.data_type().is_numeric()).map(|(i, _)| i).collect();
    if numeric.is_empty() {
        return Ok(fields);
    }
    let text = Schema::new(fields.iter().map(|f| Field::new(f.name(), DataType::Utf8, true)).collect::<Vec<_>>());
    // A sample the reader refuses (ragged rows) keeps the types inferred: the
    // read itself reports what is wrong with the file, where it is.
    let Ok(reader) = ReaderBuilder::new(Arc::new(text)).with_format(format.clone()).build(Cursor::new(sample)) else {
        return Ok(fields);
    };
    let mut zeros = vec![false; fields.len()];
    for batch in reader {
        let Ok(batch) = batch else { return Ok(fields) };
        for &i in &numeric {
            zeros[i] = zeros[i] || batch.column(i).as_string::<i32>().iter().flatten().any(leading_zero);
        }
    }
    Ok(fields.into_iter().zip(zeros).map(|(f, z)| if z { f.with_data_type(DataType::Utf8) } else { f }).collect())
}
