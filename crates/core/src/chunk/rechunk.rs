//! Rechunk kernels over raw row-major bytes: cutting the boxes an old chunk
//! gives each new chunk into one buffer per destination (pieces back to
//! back, each row-major), and assembling a new chunk from such pieces.
//! Trailing dimensions a box spans whole on both sides are one run, so a
//! piece of full rows costs a single copy.

use crate::error::{Error, Result};

/// A box of an n-d array: per dimension, elements [lo, hi).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub lo: Vec<u64>,
    pub hi: Vec<u64>,
}

impl Region {
    pub fn new(lo: Vec<u64>, hi: Vec<u64>) -> Result<Region> {
        if lo.len() != hi.len() || lo.is_empty() {
            return Err(Error::invalid("box", format!("lo {lo:?} and hi {hi:?} must name the same dimensions (at least one)")));
        }
        if lo.iter().zip(&hi).any(|(l, h)| l > h) {
            return Err(Error::invalid("box", format!("lo {lo:?} passes hi {hi:?}")));
        }
        Ok(Region { lo, hi })
    }

    pub fn shape(&self) -> Vec<usize> {
        self.lo.iter().zip(&self.hi).map(|(l, h)| (h - l) as usize).collect()
    }

    /// Elements in the box.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn within(&self, outer: &Region) -> bool {
        self.lo.len() == outer.lo.len() && (0..self.lo.len()).all(|d| self.lo[d] >= outer.lo[d] && self.hi[d] <= outer.hi[d])
    }
}

/// Byte strides of the row-major layout of `r` with `item`-byte elements.
fn strides(r: &Region, item: usize) -> Vec<usize> {
    let shape = r.shape();
    let mut s = vec![0; shape.len()];
    let mut acc = item;
    for d in (0..shape.len()).rev() {
        s[d] = acc;
        acc *= shape[d];
    }
    s
}

/// Calls `run(src_offset, dst_offset, bytes)` for each contiguous run of
/// `part` between `src_box`'s and `dst_box`'s layouts, in row-major order
/// of `part` (so destination offsets ascend when `dst_box` is `part`).
fn runs(src_box: &Region, dst_box: &Region, part: &Region, item: usize, mut run: impl FnMut(usize, usize, usize)) {
    let n = part.lo.len();
    let size = part.shape();
    if size.iter().any(|&s| s == 0) {
        return;
    }
    let (ss, ds) = (strides(src_box, item), strides(dst_box, item));
    let (sshape, dshape) = (src_box.shape(), dst_box.shape());
    // Dimensions r.. are one run: each after r is whole in the part, the source and the destination.
    let mut r = n - 1;
    while r > 0 && size[r] == sshape[r] && size[r] == dshape[r] {
        r -= 1;
    }
    let bytes = item * size[r..].iter().product::<usize>();
    let base = |strides: &[usize], b: &Region| (0..n).map(|d| (part.lo[d] - b.lo[d]) as usize * strides[d]).sum::<usize>();
    let (s0, d0) = (base(&ss, src_box), base(&ds, dst_box));
    let mut idx = vec![0usize; r];
    loop {
        let so = s0 + (0..r).map(|d| idx[d] * ss[d]).sum::<usize>();
        let dof = d0 + (0..r).map(|d| idx[d] * ds[d]).sum::<usize>();
        run(so, dof, bytes);
        // The next index over the outer dimensions, last fastest.
        let mut d = r;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < size[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

fn check_item(item: usize) -> Result<()> {
    if matches!(item, 1 | 2 | 4 | 8) {
        Ok(())
    } else {
        Err(Error::invalid("itemSize", format!("{item} is not 1, 2, 4 or 8 bytes")))
    }
}

fn check_bytes(field: &'static str, got: usize, r: &Region, item: usize) -> Result<()> {
    if got == r.len() * item {
        Ok(())
    } else {
        Err(Error::invalid(field, format!("{got} bytes for the box {:?}..{:?}, whose {} values of {item} bytes need {}", r.lo, r.hi, r.len(), r.len() * item)))
    }
}

/// The batches back to back in one buffer, each `headroom` bytes left for
/// the caller (a header it writes) and then its pieces, row-major, cut from
/// `src` (the bytes of `src_box`), back to back.
pub fn cut(src: &[u8], src_box: &Region, item: usize, batches: &[(usize, Vec<Region>)]) -> Result<Vec<u8>> {
    check_item(item)?;
    check_bytes("chunk", src.len(), src_box, item)?;
    let mut total = 0;
    for (headroom, pieces) in batches {
        total += headroom;
        for p in pieces {
            if !p.within(src_box) {
                return Err(Error::invalid("box", format!("{:?}..{:?} is not inside the chunk's {:?}..{:?}", p.lo, p.hi, src_box.lo, src_box.hi)));
            }
            total += p.len() * item;
        }
    }
    let mut buf = crate::pool::take_empty(total);
    for (headroom, pieces) in batches {
        buf.resize(buf.len() + headroom, 0);
        // Runs come in the piece's row-major order, so appending lays each piece out as its own array.
        for p in pieces {
            runs(src_box, p, p, item, |so, _, n| buf.extend_from_slice(&src[so..so + n]));
        }
    }
    Ok(buf)
}

/// Copies each piece (its box and its row-major bytes) into `out`, the bytes
/// of `out_box`. Pieces must lie inside `out_box`; whether they cover it is
/// the caller's count to keep.
pub fn assemble_into(out: &mut [u8], out_box: &Region, item: usize, pieces: &[(&Region, &[u8])]) -> Result<()> {
    check_item(item)?;
    check_bytes("chunk", out.len(), out_box, item)?;
    for (r, bytes) in pieces {
        if !r.within(out_box) {
            return Err(Error::invalid("box", format!("{:?}..{:?} is not inside the new chunk's {:?}..{:?}", r.lo, r.hi, out_box.lo, out_box.hi)));
        }
        check_bytes("piece", bytes.len(), r, item)?;
        runs(r, out_box, r, item, |so, dof, n| out[dof..dof + n].copy_from_slice(&bytes[so..so + n]));
    }
    Ok(())
}

#[cfg(test)]
#[path = "rechunk_tests.rs"]
mod tests;
