//! first, last and nUnique by group over columns of any type: values held
//! in arrow's row format (one byte string per value, comparable and
//! hashable whatever the type) and turned back into a column at the end.
//! Nulls are skipped, as the other aggregates skip them: first is the first
//! non-null value in partition order, nUnique counts distinct non-null
//! values. nUnique's partial state is each group's list of distinct values,
//! so partial states merge exactly (a union).

use std::hash::BuildHasher;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{new_null_array, Array, ArrayRef, Int64Array, ListArray, RecordBatch};
use arrow_buffer::OffsetBuffer;
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{DataType, Field};
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::agg_extra::ExtraAcc;
use super::{frame_err, frame_error};
use crate::Result;

fn converter(t: &DataType) -> Result<RowConverter> {
    RowConverter::new(vec![SortField::new(t.clone())]).map_err(frame_err("keeping values"))
}

fn column<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef> {
    b.column_by_name(name).ok_or_else(|| frame_error(format!("no column {name:?} to aggregate")))
}

/// `rows` (None: no value) back into a column of `t`.
fn column_of(conv: &RowConverter, t: &DataType, rows: &[Option<Box<[u8]>>]) -> Result<ArrayRef> {
    let null = conv.convert_columns(&[new_null_array(t, 1)]).map_err(frame_err("keeping values"))?;
    let parser = conv.parser();
    let parsed: Vec<_> = rows.iter().map(|r| r.as_deref()).collect();
    let out = conv.convert_rows(parsed.iter().map(|r| r.map_or_else(|| null.row(0), |b| parser.parse(b)))).map_err(frame_err("building values"))?;
    Ok(Arc::clone(&out[0]))
}

/// The first (or last) non-null value of each group.
pub(crate) struct Pick {
    name: String,
    input: String,
    ty: DataType,
    conv: RowConverter,
    first: bool,
    values: Vec<Option<Box<[u8]>>>,
}

impl Pick {
    pub(crate) fn new(name: &str, input: &str, ty: DataType, first: bool) -> Result<Self> {
        Ok(Pick { name: name.into(), input: input.into(), conv: converter(&ty)?, ty, first, values: Vec::new() })
    }
}

impl ExtraAcc for Pick {
    fn update(&mut self, b: &RecordBatch, groups: &[u32], ngroups: usize) -> Result<()> {
        self.values.resize(ngroups, None);
        let a = column(b, &self.input)?;
        let rows = self.conv.convert_columns(std::slice::from_ref(a)).map_err(frame_err("keeping values"))?;
        let nulls = a.logical_nulls();
        for (i, &g) in groups.iter().enumerate() {
            if g == u32::MAX || nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                continue;
            }
            let slot = &mut self.values[g as usize];
            if !self.first || slot.is_none() {
                *slot = Some(rows.row(i).as_ref().into());
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, ngroups: usize) -> Result<Vec<(Field, ArrayRef)>> {
        self.values.resize(ngroups, None);
        let c = column_of(&self.conv, &self.ty, &self.values)?;
        Ok(vec![(Field::new(&self.name, self.ty.clone(), true), c)])
    }
}

/// The type of the values of a list column (nUnique's state).
pub(crate) fn item_type(t: &DataType) -> Result<DataType> {
    match t {
        DataType::List(f) => Ok(f.data_type().clone()),
        t => Err(frame_error(format!("nUnique's state is a list column, not {t}"))),
    }
}

/// Each group's distinct non-null values: one table of (group, value)
/// pairs, the values' bytes stored once in one arrow `Rows` (no set, and
/// no allocation, per group: 1.5 M groups of a few values each took 5x a
/// count's time with a HashSet per group).
pub(crate) struct Distinct {
    name: String,
    input: String,
    ty: DataType,
    conv: RowConverter,
    merging: bool,
    table: HashTable<u32>,
    /// Each distinct pair's group, hash and value (in `values`), by entry id.
    owners: Vec<u32>,
    hashes: Vec<u64>,
    values: Rows,
}

impl Distinct {
    pub(crate) fn new(name: &str, input: &str, ty: DataType, merging: bool) -> Result<Self> {
        let conv = converter(&ty)?;
        let values = conv.empty_rows(0, 0);
        Ok(Distinct { name: name.into(), input: input.into(), conv, ty, merging, table: HashTable::new(), owners: Vec::new(), hashes: Vec::new(), values })
    }
}

impl ExtraAcc for Distinct {
    fn update(&mut self, b: &RecordBatch, groups: &[u32], _ngroups: usize) -> Result<()> {
        let a = column(b, &self.input)?;
        // A merge reads lists: each value belongs to its row's group.
        let (values, owner): (ArrayRef, Vec<u32>) = if self.merging {
            let l = a.as_list::<i32>();
            let o = l.offsets();
            let (first, last) = (o[0] as usize, o[o.len() - 1] as usize);
            let owner = (0..l.len()).flat_map(|i| std::iter::repeat_n(groups[i], (o[i + 1] - o[i]) as usize)).collect();
            (l.values().slice(first, last - first), owner)
        } else {
            (Arc::clone(a), groups.to_vec())
        };
        let rows = self.conv.convert_columns(&[super::canonical::canonical(&values)]).map_err(frame_err("keeping values"))?;
        let nulls = values.logical_nulls();
        let Distinct { table, owners, hashes, values: seen, .. } = self;
        for (i, &g) in owner.iter().enumerate() {
            if g == u32::MAX || nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                continue;
            }
            let r = rows.row(i);
            let h = FxBuildHasher.hash_one((g, r.as_ref()));
            if table.find(h, |&e| owners[e as usize] == g && seen.row(e as usize).as_ref() == r.as_ref()).is_none() {
                let e = owners.len() as u32;
                table.insert_unique(h, e, |&e| hashes[e as usize]);
                owners.push(g);
                hashes.push(h);
                seen.push(r);
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>, ngroups: usize) -> Result<Vec<(Field, ArrayRef)>> {
        // The pairs in group order (a counting sort), each group's values a list.
        let mut counts = vec![0usize; ngroups];
        for &g in &self.owners {
            counts[g as usize] += 1;
        }
        let offsets = OffsetBuffer::<i32>::from_lengths(counts.iter().copied());
        let mut next: Vec<usize> = offsets.iter().take(ngroups).map(|&o| o as usize).collect();
        let mut order = vec![0usize; self.owners.len()];
        for (e, &g) in self.owners.iter().enumerate() {
            order[next[g as usize]] = e;
            next[g as usize] += 1;
        }
        let values = if order.is_empty() {
            new_null_array(&self.ty, 0)
        } else {
            let out = self.conv.convert_rows(order.iter().map(|&e| self.values.row(e))).map_err(frame_err("building distinct values"))?;
            Arc::clone(&out[0])
        };
        let item = Arc::new(Field::new_list_field(self.ty.clone(), true));
        let list = ListArray::try_new(Arc::clone(&item), offsets, values, None).map_err(frame_err("building distinct values"))?;
        Ok(vec![(Field::new(&self.name, DataType::List(item), false), Arc::new(list))])
    }
}

/// How many distinct values each group's merged list holds.
pub(crate) fn distinct_count(name: &str, state: &RecordBatch) -> Result<ArrayRef> {
    let l = column(state, name)?.as_list::<i32>();
    let o = l.offsets();
    Ok(Arc::new((0..l.len()).map(|i| i64::from(o[i + 1] - o[i])).collect::<Int64Array>()))
}
