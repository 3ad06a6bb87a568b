//! first, last and nUnique by group over columns of any type: values held
//! in arrow's row format (one byte string per value, comparable and
//! hashable whatever the type) and turned back into a column at the end.
//! Nulls are skipped, as the other aggregates skip them: first is the first
//! non-null value in partition order, nUnique counts distinct non-null
//! values. nUnique's partial state is each group's list of distinct values,
//! so partial states merge exactly (a union).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{new_null_array, Array, ArrayRef, Int64Array, ListArray, RecordBatch};
use arrow_buffer::OffsetBuffer;
use arrow_row::{RowConverter, SortField};
use arrow_schema::{DataType, Field};
use hashbrown::HashSet;
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

/// Each group's distinct non-null values.
pub(crate) struct Distinct {
    name: String,
    input: String,
    ty: DataType,
    conv: RowConverter,
    merging: bool,
    sets: Vec<HashSet<Box<[u8]>, FxBuildHasher>>,
}

impl Distinct {
    pub(crate) fn new(name: &str, input: &str, ty: DataType, merging: bool) -> Result<Self> {
        Ok(Distinct { name: name.into(), input: input.into(), conv: converter(&ty)?, ty, merging, sets: Vec::new() })
    }
}

impl ExtraAcc for Distinct {
    fn update(&mut self, b: &RecordBatch, groups: &[u32], ngroups: usize) -> Result<()> {
        self.sets.resize_with(ngroups, Default::default);
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
        for (i, &g) in owner.iter().enumerate() {
            if g != u32::MAX && nulls.as_ref().is_none_or(|n| n.is_valid(i)) {
                let set = &mut self.sets[g as usize];
                let r = rows.row(i);
                if !set.contains(r.as_ref()) {
                    set.insert(r.as_ref().into());
                }
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, ngroups: usize) -> Result<Vec<(Field, ArrayRef)>> {
        self.sets.resize_with(ngroups, Default::default);
        let offsets = OffsetBuffer::<i32>::from_lengths(self.sets.iter().map(|s| s.len()));
        let all: Vec<Option<Box<[u8]>>> = self.sets.into_iter().flat_map(|s| s.into_iter().map(Some)).collect();
        let values = if all.is_empty() { new_null_array(&self.ty, 0) } else { column_of(&self.conv, &self.ty, &all)? };
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
