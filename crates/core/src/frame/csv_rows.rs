//! Where in a CSV file a read failed, in the user's terms. arrow-csv counts
//! records from the start of the bytes it was given (a block, header
//! included or not) and names columns by index; the user looks for the row
//! of the file, the line their editor shows and the column's name. Only the
//! error path pays: the bytes before the block are scanned again to count.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use arrow_schema::Schema;
use regex::Regex;

use super::types::type_name;

/// Records (ended by a \n or \r outside quotes; blank ones skipped, as
/// csv-core does) and lines (\n) seen so far.
pub(crate) struct RecordScan {
    quote: u8,
    in_quote: bool,
    content: bool,
    pub records: u64,
    pub lines: u64,
}

impl RecordScan {
    pub fn new(quote: u8) -> Self {
        RecordScan { quote, in_quote: false, content: false, records: 0, lines: 0 }
    }

    /// Scans `bytes`; with `stop`, halts at the first byte of record `stop` (0-based) and returns its index.
    pub fn scan(&mut self, bytes: &[u8], stop: Option<u64>) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate() {
            if !self.in_quote && (b == b'\n' || b == b'\r') {
                if self.content {
                    self.records += 1;
                    self.content = false;
                }
            } else {
                if !self.content && stop == Some(self.records) {
                    return Some(i);
                }
                self.content = true;
                if b == self.quote {
                    self.in_quote = !self.in_quote;
                }
            }
            if b == b'\n' {
                self.lines += 1;
            }
        }
        None
    }
}

/// Where a block's read failed: the block's first byte in the file, its bytes, whether it holds the header.
pub(crate) struct Block<'a> {
    pub path: &'a Path,
    pub at: u64,
    pub bytes: &'a [u8],
    pub header_here: bool,
    /// Whether the file has a header (so the rows before the block count one line less).
    pub header: bool,
    pub quote: u8,
}

impl Block<'_> {
    /// Data record `k` (0-based within the block) as (row of the file, line of the file), both 1-based.
    fn locate(&self, k: u64) -> Option<(u64, u64)> {
        let mut before = RecordScan::new(self.quote);
        if self.at > 0 {
            let mut f = File::open(self.path).ok()?.take(self.at);
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = f.read(&mut buf).ok()?;
                if n == 0 {
                    break;
                }
                before.scan(&buf[..n], None);
            }
        }
        let mut here = RecordScan::new(self.quote);
        here.scan(self.bytes, Some(k + self.header_here as u64))?;
        let header_before = (self.header && self.at > 0) as u64;
        Some((before.records - header_before + k + 1, before.lines + here.lines + 1))
    }

    fn column(schema: &Schema, i: &str) -> (String, String) {
        i.parse::<usize>().ok().and_then(|i| schema.fields().get(i)).map_or_else(
            || (format!("column {i}"), String::new()),
            |f| (format!("column {:?}", f.name()), type_name(f.data_type()).unwrap_or_else(|_| f.data_type().to_string())),
        )
    }

    /// arrow-csv's message, retold with the row, line and column by name.
    pub fn explain(&self, message: &str, schema: &Schema) -> String {
        let h = self.header_here as u64;
        let at = |k: u64| match self.locate(k) {
            Some((row, line)) => format!("row {row} (line {line})"),
            None => format!("a row of the block from byte {}", self.at),
        };
        let num = |s: &str| s.parse::<u64>().unwrap_or(0);
        let fix = "give the column's type in `schema` (e.g. 'utf8'), sample more of each file (sampleBytes), or fix the value";
        let value = Regex::new(r"Error while parsing value '(?s)(.*)' as type '.*' for column (\d+) at line (\d+)\. Row data").expect("a valid regex");
        if let Some(c) = value.captures(message) {
            let (col, t) = Self::column(schema, &c[2]);
            return format!("{}, {col}: {:?} is not a valid {t}; {fix}", at(num(&c[3]).saturating_sub(h)), &c[1]);
        }
        let parsing = Regex::new(r"Error parsing column (\d+) at line (\d+): (?s)(.*)").expect("a valid regex");
        if let Some(c) = parsing.captures(message) {
            let (col, t) = Self::column(schema, &c[1]);
            return format!("{}, {col}: not a valid {t} ({}); {fix}", at(num(&c[2]).saturating_sub(h)), &c[3]);
        }
        let fields = Regex::new(r"incorrect number of fields for line (\d+), expected (\d+) got (.*)").expect("a valid regex");
        if let Some(c) = fields.captures(message) {
            return format!("{} has {} fields where the header has {}: a bad row (an unquoted delimiter, or a quote left open)", at(num(&c[1]).saturating_sub(1 + h)), &c[3], &c[2]);
        }
        let utf8 = Regex::new(r"invalid UTF-8 data for line (\d+) and field (\d+)").expect("a valid regex");
        if let Some(c) = utf8.captures(message) {
            // This message counts fields from 1.
            let (col, _) = Self::column(schema, &num(&c[2]).saturating_sub(1).to_string());
            return super::csv_encoding::invalid_utf8(&format!("{}, {col}", at(num(&c[1]).saturating_sub(1 + h))));
        }
        format!("in the block from byte {}: {message}", self.at)
    }
}

#[cfg(test)]
#[path = "csv_rows_tests.rs"]
mod tests;
