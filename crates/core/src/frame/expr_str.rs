//! The string expressions (`str.contains`, `startsWith`, `lower`, `upper`,
//! `len`, `split`, `slice`) over utf8 columns, nulls staying null. Patterns
//! are the regex crate's syntax: the client translated the user's JS RegExp
//! and refused what this engine cannot honour (lookaround, backreferences).

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::DataType;
use regex::Regex;

use super::expr::{eval, Expr, Val};
use super::frame_error;
use crate::Result;

/// A pattern compiled as the regex crate reads it, its error naming it.
pub fn compile(pattern: &str) -> Result<Regex> {
    Regex::new(pattern).map_err(|e| frame_error(format!("the pattern /{pattern}/ does not compile: {e}")))
}

fn strings(v: &Val, what: &str) -> Result<StringArray> {
    match v.array.data_type() {
        DataType::Utf8 => Ok(v.array.as_string::<i32>().clone()),
        DataType::Null => Ok(StringArray::new_null(v.array.len())),
        t => Err(frame_error(format!("str.{what} takes a utf8 column, not {t}"))),
    }
}

fn map<O: Array + 'static>(v: Val, what: &str, f: impl Fn(&StringArray) -> O) -> Result<Val> {
    let s = strings(&v, what)?;
    Ok(Val { array: Arc::new(f(&s)) as ArrayRef, scalar: v.scalar })
}

/// Characters `offset` on (from the end if negative), `length` of them or to the end.
fn slice_chars(s: &str, offset: i64, length: Option<u64>) -> &str {
    let n = s.chars().count() as i64;
    let start = if offset < 0 { (n + offset).max(0) } else { offset.min(n) } as usize;
    let end = length.map_or(n as usize, |l| (start as u64).saturating_add(l).min(n as u64) as usize);
    let byte = |c: usize| s.char_indices().nth(c).map_or(s.len(), |(b, _)| b);
    &s[byte(start)..byte(end)]
}

/// Each string split at `pattern`, as JS's `split` (an empty string gives one empty piece).
fn split(s: &StringArray, pattern: &str, regex: bool) -> Result<ArrayRef> {
    let mut out = ListBuilder::with_capacity(StringBuilder::with_capacity(s.len() * 4, s.value_data().len()), s.len());
    let re = if regex { Some(compile(pattern)?) } else { None };
    for v in s.iter() {
        match v {
            None => out.append_null(),
            Some(v) => {
                match &re {
                    Some(re) => re.split(v).for_each(|p| out.values().append_value(p)),
                    None if pattern.is_empty() => v.chars().for_each(|c| out.values().append_value(c.encode_utf8(&mut [0; 4]))),
                    None => v.split(pattern).for_each(|p| out.values().append_value(p)),
                }
                out.append(true);
            }
        }
    }
    Ok(Arc::new(out.finish()))
}

pub(crate) fn eval_str(batch: &RecordBatch, e: &Expr) -> Result<Val> {
    use Expr::*;
    match e {
        StrContains { expr, pattern, regex } => {
            let v = eval(batch, expr)?;
            if *regex {
                let re = compile(pattern)?;
                map(v, "contains", |s| s.iter().map(|x| x.map(|x| re.is_match(x))).collect::<BooleanArray>())
            } else {
                let finder = memchr::memmem::Finder::new(pattern.as_bytes());
                map(v, "contains", |s| s.iter().map(|x| x.map(|x| finder.find(x.as_bytes()).is_some())).collect::<BooleanArray>())
            }
        }
        StrStartsWith { expr, prefix } => map(eval(batch, expr)?, "startsWith", |s| s.iter().map(|x| x.map(|x| x.starts_with(prefix.as_str()))).collect::<BooleanArray>()),
        StrLower { expr } => map(eval(batch, expr)?, "lower", |s| s.iter().map(|x| x.map(str::to_lowercase)).collect::<StringArray>()),
        StrUpper { expr } => map(eval(batch, expr)?, "upper", |s| s.iter().map(|x| x.map(str::to_uppercase)).collect::<StringArray>()),
        StrLen { expr } => map(eval(batch, expr)?, "len", |s| s.iter().map(|x| x.map(|x| x.chars().count() as i64)).collect::<Int64Array>()),
        StrSlice { expr, offset, length } => map(eval(batch, expr)?, "slice", |s| s.iter().map(|x| x.map(|x| slice_chars(x, *offset, *length))).collect::<StringArray>()),
        StrSplit { expr, pattern, regex } => {
            let v = eval(batch, expr)?;
            let s = strings(&v, "split")?;
            Ok(Val { array: split(&s, pattern, *regex)?, scalar: v.scalar })
        }
        e => Err(frame_error(format!("{e:?} is not an expression this core knows"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_count_characters_from_either_end() {
        assert_eq!(slice_chars("héllo", 1, Some(3)), "éll");
        assert_eq!(slice_chars("héllo", -2, None), "lo");
        assert_eq!(slice_chars("ab", 5, Some(1)), "");
        assert_eq!(slice_chars("ab", -5, Some(1)), "a");
    }

    #[test]
    fn the_client_translations_of_js_regexps_compile() {
        for p in ["(?i)^[a-z\u{e9}]+(?-u:\\b)", "[^0-9A-Za-z_]+", "[a\\&\\[b]", "(?s:.)", "[\\t\\n\\x0B\\f\\r \\x{A0}\\x{2000}-\\x{200A}]+", "x\\x00"] {
            compile(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        }
        let re = compile("(?i)^[a-z\u{e9}]+(?-u:\\b)").unwrap();
        assert!(re.is_match("\u{c9}MILE zola") && re.is_match("Zo\u{eb}"));
        assert_eq!(compile("a(?=b)").unwrap_err().code(), "ERR_SPILLWAY_FRAME");
    }
}
