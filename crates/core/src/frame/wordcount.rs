//! The word count of DESIGN.md fused: `select(col(line).str.split(p)
//! .explode().alias(w)).filter(col(w).neq('')).groupBy(w).agg({ n: count() })`
//! counts each line's words straight into the partial state, without the
//! list column, the exploded column or the row keys. A pattern that is one
//! ASCII character class repeated (`[^A-Za-z0-9_]+`, `\W+` as the client
//! translates it) or one ASCII character becomes a byte table; any other
//! splits with the regex. The state is the one the plain path makes, so
//! the merge is the same.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use hashbrown::HashMap;
use rustc_hash::FxBuildHasher;
use serde_json::Value;

use super::aggregate::AggSpec;
use super::expr::Expr;
use super::expr_str::compile;
use super::plan::Step;
use super::{frame_err, frame_error};
use crate::Result;

/// A fused word count's plan: the line column, how to split it, the word and count columns.
pub(crate) struct WordCount<'a> {
    line: &'a str,
    pattern: &'a str,
    regex: bool,
    word: &'a str,
    counts: Vec<&'a str>,
}

fn split_of(e: &Expr) -> Option<(&str, &str, bool, &str)> {
    let Expr::Alias { expr, name } = e else { return None };
    let Expr::Explode { expr } = expr.as_ref() else { return None };
    let Expr::StrSplit { expr, pattern, regex } = expr.as_ref() else { return None };
    let Expr::Col { name: line } = expr.as_ref() else { return None };
    Some((line, pattern, *regex, name))
}

fn drops_empty(p: &Expr, word: &str) -> bool {
    matches!(p, Expr::Neq { left, right } if matches!(left.as_ref(), Expr::Col { name } if name == word) && matches!(right.as_ref(), Expr::Lit { value: Value::String(s), ty } if s.is_empty() && ty == "utf8"))
}

impl<'a> WordCount<'a> {
    /// The fused form of these steps and partial aggregation, where they are a word count.
    pub(crate) fn of(steps: &'a [Step], partial: Option<&'a AggSpec>) -> Option<Self> {
        let [Step::Select { exprs }, Step::Filter { predicate }] = steps else { return None };
        let [e] = exprs.as_slice() else { return None };
        let (line, pattern, regex, word) = split_of(e)?;
        let spec = partial?;
        let counts_words = spec.aggs.iter().all(|a| a.func == "count" && a.column.as_deref().is_none_or(|c| c == word));
        if !(drops_empty(predicate, word) && spec.keys.len() == 1 && spec.keys[0] == word && counts_words) {
            return None;
        }
        Some(WordCount { line, pattern, regex, word, counts: spec.aggs.iter().map(|a| a.name.as_str()).collect() })
    }

    /// The separator bytes, where the pattern is one ASCII class repeated or one ASCII character.
    fn table(&self) -> Result<Option<[bool; 256]>> {
        let p = self.pattern;
        if !self.regex {
            return Ok((p.len() == 1 && p.is_ascii()).then(|| {
                let mut t = [false; 256];
                t[p.as_bytes()[0] as usize] = true;
                t
            }));
        }
        let Some(class) = p.strip_suffix('+').filter(|c| c.starts_with('[') && c.ends_with(']') && c.is_ascii()) else { return Ok(None) };
        // Escapes that can name non-ASCII characters, and nested classes, keep the regex.
        if ["\\x", "\\u", "\\p", "\\P", "\\s", "\\S", "\\w", "\\W", "\\d", "\\D", "[[", "[:", "(?", "&&", "--", "~~"].iter().any(|s| class.contains(s)) || class[1..class.len() - 1].contains('[') && !class.contains("\\[") {
            return Ok(None);
        }
        let re = compile(&format!("^{class}$"))?;
        let mut t = [false; 256];
        for b in 0u8..128 {
            t[b as usize] = re.is_match(char::from(b).encode_utf8(&mut [0; 4]));
        }
        // A class of ASCII characters holds every non-ASCII one when negated, none otherwise.
        let non_ascii = re.is_match("\u{e9}");
        t[128..].iter_mut().for_each(|x| *x = non_ascii);
        Ok(Some(t))
    }

    /// The partial state of the word count over these batches of lines.
    pub(crate) fn run<'b>(&self, batches: &'b [RecordBatch]) -> Result<RecordBatch> {
        let mut counts: HashMap<&'b [u8], i64, FxBuildHasher> = HashMap::with_hasher(FxBuildHasher);
        let table = self.table()?;
        let re = if table.is_none() && self.regex { Some(compile(self.pattern)?) } else { None };
        for b in batches {
            let lines = b.column_by_name(self.line).ok_or_else(|| frame_error(format!("no column {:?} to split", self.line)))?;
            if lines.data_type() != &DataType::Utf8 {
                return Err(frame_error(format!("str.split takes a utf8 column, not {}", lines.data_type())));
            }
            let lines: &StringArray = lines.as_string::<i32>();
            let mut add = |w: &'b [u8]| {
                if !w.is_empty() {
                    *counts.entry(w).or_insert(0) += 1;
                }
            };
            for line in lines.iter().flatten() {
                let bytes = line.as_bytes();
                match (&table, &re) {
                    (Some(t), _) => {
                        let mut i = 0;
                        while i < bytes.len() {
                            while i < bytes.len() && t[bytes[i] as usize] {
                                i += 1;
                            }
                            let s = i;
                            while i < bytes.len() && !t[bytes[i] as usize] {
                                i += 1;
                            }
                            add(&bytes[s..i]);
                        }
                    }
                    (None, Some(re)) => re.split(line).for_each(|w| add(w.as_bytes())),
                    (None, None) => line.split(self.pattern).for_each(|w| add(w.as_bytes())),
                }
            }
        }
        let words: StringArray = counts.keys().map(|w| Some(std::str::from_utf8(w).expect("words are cut at ASCII bytes or by the regex"))).collect();
        let n: ArrayRef = Arc::new(Int64Array::from_iter_values(counts.values().copied()));
        let mut fields = vec![Field::new(self.word, DataType::Utf8, true)];
        let mut columns: Vec<ArrayRef> = vec![Arc::new(words)];
        for c in &self.counts {
            fields.push(Field::new(*c, DataType::Int64, false));
            columns.push(Arc::clone(&n));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(frame_err("counting words"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{aggregate, expr};
    use arrow_array::types::Int64Type;
    use std::collections::BTreeMap;

    fn plan(pattern: &str, regex: bool) -> (Vec<Step>, AggSpec) {
        let steps = format!(
            r#"[{{"kind":"select","exprs":[{{"op":"alias","name":"w","expr":{{"op":"explode","expr":{{"op":"strSplit","expr":{{"op":"col","name":"line"}},"pattern":{pattern:?},"regex":{regex}}}}}}}]}},
               {{"kind":"filter","predicate":{{"op":"neq","left":{{"op":"col","name":"w"}},"right":{{"op":"lit","value":"","type":"utf8"}}}}}}]"#
        );
        (serde_json::from_str(&steps).unwrap(), serde_json::from_str(r#"{"keys":["w"],"aggs":[{"name":"n","func":"count"}]}"#).unwrap())
    }

    fn counts(b: &RecordBatch) -> BTreeMap<String, i64> {
        let w = b.column_by_name("w").unwrap().as_string::<i32>();
        let n = b.column_by_name("n").unwrap().as_primitive::<Int64Type>();
        w.iter().zip(n.values()).map(|(w, n)| (w.unwrap().to_string(), *n)).collect()
    }

    #[test]
    fn the_fused_count_equals_split_explode_filter_and_partial_count() {
        let lines = StringArray::from(vec![Some("The cat, the CAT"), None, Some(""), Some("na\u{ef}ve caf\u{e9}  x_1 x_1"), Some("  lead")]);
        let b = RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("line", DataType::Utf8, true)])), vec![Arc::new(lines)]).unwrap();
        for (pattern, regex, table) in [("[^A-Za-z0-9_]+", true, true), ("[ ,]+", true, true), (" ", false, true), (" +|,", true, false), (", ", false, false)] {
            let (steps, spec) = plan(pattern, regex);
            let wc = WordCount::of(&steps, Some(&spec)).expect("a word count");
            assert_eq!(wc.table().unwrap().is_some(), table, "{pattern}");
            let fused = wc.run(std::slice::from_ref(&b)).unwrap();
            let Step::Select { exprs } = &steps[0] else { unreachable!() };
            let Step::Filter { predicate } = &steps[1] else { unreachable!() };
            let words = expr::filter(&expr::select(&b, exprs).unwrap(), predicate).unwrap();
            let plain = aggregate::partial(&spec, &words.schema(), &[words]).unwrap();
            assert_eq!(fused.schema(), plain.schema(), "{pattern}");
            assert_eq!(counts(&fused), counts(&plain), "{pattern}");
        }
    }
}
