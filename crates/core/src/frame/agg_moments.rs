//! std and var by group: each partition keeps count, mean and the sum of
//! squared deviations (Welford), and partial states merge by Chan et al.'s
//! formula, so the result does not depend on how rows were split; sample
//! variance (n - 1), as SQL's and Polars' defaults.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};

use super::agg_extra::{column_of, ExtraAcc};
use super::aggregate::AggExpr;
use super::{frame_err, frame_error};
use crate::Result;

pub(crate) struct Moments {
    name: String,
    input: String,
    merging: bool,
    n: Vec<i64>,
    mean: Vec<f64>,
    m2: Vec<f64>,
}

fn col<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef> {
    b.column_by_name(name).ok_or_else(|| frame_error(format!("no column {name:?} to aggregate")))
}

impl Moments {
    pub(crate) fn new(a: &AggExpr, schema: &Schema, merging: bool) -> Result<Self> {
        let input = if merging { a.name.clone() } else { column_of(a)?.to_string() };
        if !merging {
            let t = schema.field_with_name(&input).map_err(|_| frame_error(format!("no column {input:?} to {}", a.func)))?.data_type();
            if !(t.is_integer() || t.is_floating() || matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..))) {
                return Err(frame_error(format!("{}({input:?}) needs a numeric column; {input:?} is {t}", a.func)));
            }
        }
        Ok(Moments { name: a.name.clone(), input, merging, n: Vec::new(), mean: Vec::new(), m2: Vec::new() })
    }

    /// Chan's merge of (n, mean, m2) into group g.
    fn merge(&mut self, g: usize, n: i64, mean: f64, m2: f64) {
        if n == 0 {
            return;
        }
        let (na, ma) = (self.n[g] as f64, self.mean[g]);
        let total = na + n as f64;
        let delta = mean - ma;
        self.mean[g] = ma + delta * n as f64 / total;
        self.m2[g] += m2 + delta * delta * na * n as f64 / total;
        self.n[g] += n;
    }
}

impl ExtraAcc for Moments {
    fn update(&mut self, b: &RecordBatch, groups: &[u32], ngroups: usize) -> Result<()> {
        self.n.resize(ngroups, 0);
        self.mean.resize(ngroups, 0.0);
        self.m2.resize(ngroups, 0.0);
        if self.merging {
            let n = col(b, &format!("{}__n", self.name))?.as_primitive::<Int64Type>().clone();
            let mean = col(b, &format!("{}__mean", self.name))?.as_primitive::<Float64Type>().clone();
            let m2 = col(b, &format!("{}__m2", self.name))?.as_primitive::<Float64Type>().clone();
            for (i, &g) in groups.iter().enumerate() {
                if g != u32::MAX {
                    self.merge(g as usize, n.value(i), mean.value(i), m2.value(i));
                }
            }
            return Ok(());
        }
        let x = arrow_cast::cast(col(b, &self.input)?, &DataType::Float64).map_err(frame_err("reading a numeric column"))?;
        let x = x.as_primitive::<Float64Type>();
        for (i, &g) in groups.iter().enumerate() {
            if g != u32::MAX && x.is_valid(i) {
                let (g, v) = (g as usize, x.value(i));
                self.n[g] += 1;
                let delta = v - self.mean[g];
                self.mean[g] += delta / self.n[g] as f64;
                self.m2[g] += delta * (v - self.mean[g]);
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, ngroups: usize) -> Result<Vec<(Field, ArrayRef)>> {
        self.n.resize(ngroups, 0);
        self.mean.resize(ngroups, 0.0);
        self.m2.resize(ngroups, 0.0);
        let f = |suffix: &str, t: DataType| Field::new(format!("{}__{suffix}", self.name), t, false);
        Ok(vec![
            (f("n", DataType::Int64), Arc::new(Int64Array::from(std::mem::take(&mut self.n))) as ArrayRef),
            (f("mean", DataType::Float64), Arc::new(Float64Array::from(std::mem::take(&mut self.mean)))),
            (f("m2", DataType::Float64), Arc::new(Float64Array::from(std::mem::take(&mut self.m2)))),
        ])
    }
}

/// Sample variance (or its root) of merged states; null below two values.
pub(crate) fn finish(name: &str, std: bool, state: &RecordBatch) -> Result<ArrayRef> {
    let n = col(state, &format!("{name}__n"))?.as_primitive::<Int64Type>().clone();
    let m2 = col(state, &format!("{name}__m2"))?.as_primitive::<Float64Type>().clone();
    let out: Float64Array = n
        .values()
        .iter()
        .zip(m2.values())
        .map(|(&n, &m2)| if n < 2 { None } else { Some(if std { (m2 / (n - 1) as f64).sqrt() } else { m2 / (n - 1) as f64 }) })
        .collect();
    Ok(Arc::new(out))
}
