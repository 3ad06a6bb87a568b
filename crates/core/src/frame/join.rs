//! Hash joins of every kind over two partitions' rows (after a hash shuffle
//! of both sides by their keys, or with one side broadcast whole): the right
//! side's key rows (arrow-row bytes) go into a hash table of groups, each a
//! chain of its rows in order; the left side probes it. A null in any key
//! never matches, as SQL's `=`. The columns out are the plan's (the client
//! named them: keys once for `on`, suffixes for clashes).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use arrow_select::concat::{concat, concat_batches};
use arrow_select::take::take;
use hashbrown::HashTable;
use serde::Deserialize;

use super::partition::{columns, key_rows, row_hash, table_hash};
use super::{frame_err, frame_error};
use crate::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum How {
    Inner,
    Left,
    Right,
    Outer,
    Semi,
    Anti,
}

/// Where an output column comes from: a side's column, or a key both sides share (`on`), whichever side has it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "from", rename_all = "camelCase")]
pub enum OutCol {
    Left { column: String, name: String },
    Right { column: String, name: String },
    Key { left: String, right: String, name: String },
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JoinSpec {
    pub left_on: Vec<String>,
    pub right_on: Vec<String>,
    pub how: How,
    pub columns: Vec<OutCol>,
}

pub(crate) const NONE: u32 = u32::MAX;

/// Whether row i has no null in any key.
pub(crate) fn all_valid(keys: &[ArrayRef], n: usize) -> Vec<bool> {
    let mut out = vec![true; n];
    for k in keys {
        if let Some(nulls) = k.logical_nulls() {
            for (i, v) in out.iter_mut().enumerate() {
                *v &= nulls.is_valid(i);
            }
        }
    }
    out
}

/// The right side's rows by key: each distinct key a group, its rows chained in order.
pub(crate) struct Built {
    pub(crate) types: Vec<DataType>,
    pub(crate) rows: arrow_row::Rows,
    pub(crate) table: HashTable<u32>,
    pub(crate) heads: Vec<u32>,
    pub(crate) next: Vec<u32>,
}

impl Built {
    /// The group of the key row `bytes`, if that key has rows.
    #[inline]
    pub(crate) fn group(&self, bytes: arrow_row::Row<'_>) -> Option<u32> {
        self.table.find(table_hash(row_hash(bytes.as_ref())), |&g| self.rows.row(self.heads[g as usize] as usize) == bytes).copied()
    }
}

pub(crate) fn checked_keys(spec: &JoinSpec, left: &RecordBatch, right: &RecordBatch) -> Result<Vec<DataType>> {
    if spec.left_on.len() != spec.right_on.len() || spec.left_on.is_empty() {
        return Err(frame_error(format!("a join needs as many left keys as right keys, at least one (got {:?} and {:?})", spec.left_on, spec.right_on)));
    }
    let lk = columns(left, &spec.left_on, "join left key")?;
    let rk = columns(right, &spec.right_on, "join right key")?;
    for ((l, r), (ln, rn)) in lk.iter().zip(&rk).zip(spec.left_on.iter().zip(&spec.right_on)) {
        if l.data_type() != r.data_type() {
            return Err(frame_error(format!("join keys {ln:?} ({}) and {rn:?} ({}) differ in type: cast one to the other's", l.data_type(), r.data_type())));
        }
    }
    Ok(lk.iter().map(|a| a.data_type().clone()).collect())
}

fn build(spec: &JoinSpec, types: Vec<DataType>, right: &RecordBatch) -> Result<Built> {
    build_keys(types, &columns(right, &spec.right_on, "join right key")?, right.num_rows())
}

/// The rows of key columns `rk` (`nr` rows) in a table of groups.
pub(crate) fn build_keys(types: Vec<DataType>, rk: &[ArrayRef], nr: usize) -> Result<Built> {
    let rows = key_rows(&types, rk)?;
    let valid = all_valid(rk, nr);
    let mut table: HashTable<u32> = HashTable::new();
    let (mut heads, mut tails, mut hashes) = (Vec::<u32>::new(), Vec::<u32>::new(), Vec::<u64>::new());
    let mut next = vec![NONE; nr];
    for j in 0..nr {
        if !valid[j] {
            continue;
        }
        let bytes = rows.row(j);
        // Remixed: this side reached the collect as one output's rows (or one grace bucket's), whose raw hashes share bits.
        let h = table_hash(row_hash(bytes.as_ref()));
        match table.find(h, |&g| rows.row(heads[g as usize] as usize) == bytes) {
            Some(&g) => {
                next[tails[g as usize] as usize] = j as u32;
                tails[g as usize] = j as u32;
            }
            None => {
                let g = heads.len() as u32;
                table.insert_unique(h, g, |&g| hashes[g as usize]);
                heads.push(j as u32);
                tails.push(j as u32);
                hashes.push(h);
            }
        }
    }
    Ok(Built { types, rows, table, heads, next })
}

/// Left and right row indices of the output for `left`'s rows, in left order (None: no row of that side); the right rows matched are marked in `matched` (right and outer joins).
pub(crate) fn probe(spec: &JoinSpec, b: &Built, left: &RecordBatch, matched: &mut [bool]) -> Result<(UInt32Array, UInt32Array)> {
    let lk = columns(left, &spec.left_on, "join left key")?;
    let nl = left.num_rows();
    let lrows = key_rows(&b.types, &lk)?;
    let lvalid = all_valid(&lk, nl);
    let (mut li, mut ri): (Vec<Option<u32>>, Vec<Option<u32>>) = (Vec::new(), Vec::new());
    let keep_right = !matched.is_empty();
    for i in 0..nl {
        let g = if lvalid[i] {
            b.group(lrows.row(i))
        } else {
            None
        };
        match (spec.how, g) {
            (How::Semi, Some(_)) | (How::Anti, None) => li.push(Some(i as u32)),
            (How::Semi | How::Anti, _) => {}
            (_, Some(g)) => {
                let mut j = b.heads[g as usize];
                while j != NONE {
                    li.push(Some(i as u32));
                    ri.push(Some(j));
                    if keep_right {
                        matched[j as usize] = true;
                    }
                    j = b.next[j as usize];
                }
            }
            (How::Left | How::Outer, None) => {
                li.push(Some(i as u32));
                ri.push(None);
            }
            (_, None) => {}
        }
    }
    Ok((UInt32Array::from(li), UInt32Array::from(ri)))
}

/// The right rows no left row matched, with no left row (right and outer joins).
fn unmatched(matched: &[bool]) -> (UInt32Array, UInt32Array) {
    let ri: UInt32Array = matched.iter().enumerate().filter(|(_, m)| !**m).map(|(j, _)| Some(j as u32)).collect();
    (UInt32Array::new_null(ri.len()), ri)
}

fn keeps_right(how: How) -> bool {
    matches!(how, How::Right | How::Outer)
}

/// `left` joined with `right` as `spec` says, one batch.
pub fn join(spec: &JoinSpec, left: &RecordBatch, right: &RecordBatch) -> Result<RecordBatch> {
    let types = checked_keys(spec, left, right)?;
    let built = build(spec, types, right)?;
    let mut matched = vec![false; if keeps_right(spec.how) { right.num_rows() } else { 0 }];
    let (li, ri) = probe(spec, &built, left, &mut matched)?;
    if matched.is_empty() {
        return output(spec, left, right, &li, &ri);
    }
    let (ul, ur) = unmatched(&matched);
    let cat = |a: &UInt32Array, b: &UInt32Array| a.iter().chain(b.iter()).collect::<UInt32Array>();
    output(spec, left, right, &cat(&li, &ul), &cat(&ri, &ur))
}

/// Left rows probed at a time: an output is made and encoded in pieces this many left rows long, never whole in Arrow and IPC at once.
pub(crate) const PROBE_ROWS: usize = 64 * 1024;

/// A join's output as an IPC stream (what a collect or a broadcast join hands back): the right side built once, the left's batches probed and written a piece at a time, so neither the left concatenated nor the whole output in Arrow form is ever held beside the stream.
pub fn join_ipc(spec: &JoinSpec, left: (&SchemaRef, &[RecordBatch]), right: (&SchemaRef, &[RecordBatch])) -> Result<Vec<u8>> {
    let right = concat_batches(right.0, right.1).map_err(frame_err("gathering a join side"))?;
    let empty = RecordBatch::new_empty(Arc::clone(left.0));
    let types = checked_keys(spec, &empty, &right)?;
    let built = build(spec, types, &right)?;
    let none = UInt32Array::from(Vec::<u32>::new());
    let schema = output(spec, &empty, &right, &none, &none)?.schema();
    let mut w = StreamWriter::try_new(Vec::new(), &schema).map_err(frame_err("encoding IPC"))?;
    let mut matched = vec![false; if keeps_right(spec.how) { right.num_rows() } else { 0 }];
    for b in left.1 {
        let mut at = 0;
        while at < b.num_rows() {
            let piece = b.slice(at, PROBE_ROWS.min(b.num_rows() - at));
            at += piece.num_rows();
            let (li, ri) = probe(spec, &built, &piece, &mut matched)?;
            if !li.is_empty() {
                w.write(&output(spec, &piece, &right, &li, &ri)?).map_err(frame_err("encoding IPC"))?;
            }
        }
    }
    if !matched.is_empty() {
        let (li, ri) = unmatched(&matched);
        if !ri.is_empty() {
            w.write(&output(spec, &empty, &right, &li, &ri)?).map_err(frame_err("encoding IPC"))?;
        }
    }
    w.into_inner().map_err(frame_err("encoding IPC"))
}

/// The output columns of the rows `li` of `left` paired with `ri` of `right`.
pub(crate) fn output(spec: &JoinSpec, left: &RecordBatch, right: &RecordBatch, li: &UInt32Array, ri: &UInt32Array) -> Result<RecordBatch> {
    let semi = matches!(spec.how, How::Semi | How::Anti);
    let (left_missing, right_missing) = (matches!(spec.how, How::Right | How::Outer), matches!(spec.how, How::Left | How::Outer));
    let field = |b: &RecordBatch, c: &str| -> Result<Field> {
        b.schema().field_with_name(c).cloned().map_err(|_| frame_error(format!("join: no column {c:?} to output")))
    };
    let col = |b: &RecordBatch, c: &str| columns(b, &[c.to_string()], "join output").map(|mut v| v.remove(0));
    let mut fields = Vec::with_capacity(spec.columns.len());
    let mut out: Vec<ArrayRef> = Vec::with_capacity(spec.columns.len());
    for c in &spec.columns {
        let (f, a) = match c {
            OutCol::Left { column, name } => {
                let f = field(left, column)?;
                (Field::new(name, f.data_type().clone(), f.is_nullable() || left_missing), take(col(left, column)?.as_ref(), li, None).map_err(frame_err("taking join rows"))?)
            }
            OutCol::Right { column, name } if !semi => {
                let f = field(right, column)?;
                (Field::new(name, f.data_type().clone(), f.is_nullable() || right_missing), take(col(right, column)?.as_ref(), ri, None).map_err(frame_err("taking join rows"))?)
            }
            OutCol::Right { column, .. } => return Err(frame_error(format!("a semi or anti join outputs the left side's columns only, not {column:?}"))),
            OutCol::Key { left: lc, right: rc, name } => {
                // The key from whichever side the row has: the left's rows, then the right's after them.
                let (l, r) = (col(left, lc)?, col(right, rc)?);
                let both = concat(&[l.as_ref(), r.as_ref()]).map_err(frame_err("joining key columns"))?;
                let nl = left.num_rows() as u32;
                let idx: UInt32Array = li.iter().zip(ri.iter().chain(std::iter::repeat(None))).map(|(a, b)| a.or(b.map(|b| b + nl))).collect();
                let nullable = field(left, lc)?.is_nullable() || field(right, rc)?.is_nullable();
                (Field::new(name, l.data_type().clone(), nullable), take(both.as_ref(), &idx, None).map_err(frame_err("taking join keys"))?)
            }
        };
        fields.push(f);
        out.push(a);
    }
    let rows = li.len();
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), out, &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows))).map_err(frame_err("building join output"))
}

#[cfg(test)]
#[path = "join_tests.rs"]
mod tests;
