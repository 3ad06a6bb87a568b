use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::chunk::rechunk::{cut, Region};

use crate::error::{invalid, to_js, to_u64};

/// A box from its per-dimension lo and hi.
pub(crate) fn to_region(lo: &[f64], hi: &[f64]) -> Result<Region> {
    let conv = |v: &[f64]| v.iter().map(|&x| to_u64("box", x)).collect::<Result<Vec<u64>>>();
    Region::new(conv(lo)?, conv(hi)?).map_err(to_js)
}

/// Boxes of `n` dimensions given flat, each as its lo then its hi.
pub(crate) fn to_regions(n: usize, flat: &[f64]) -> Result<Vec<Region>> {
    if n == 0 || flat.len() % (2 * n) != 0 {
        return Err(invalid("boxes", format!("{} numbers are not whole boxes of {n} dimensions (lo then hi each)", flat.len())));
    }
    flat.chunks(2 * n).map(|b| to_region(&b[..n], &b[n..])).collect()
}

pub struct CutTask {
    chunk: Buffer,
    src: Region,
    item: usize,
    batches: Vec<(usize, Vec<Region>)>,
}

impl Task for CutTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        cut(&self.chunk, &self.src, self.item, &self.batches).map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::buffer::to_js_buffer(&env, out)
    }
}

/// Cuts an old chunk (the bytes of the box lo..hi) into batches laid back
/// to back in one buffer: batch i is `headroom[i]` bytes left for the
/// caller, then its `pieces[i]` boxes (taken in order from `boxes`, each
/// lo then hi), row-major. The chunk is read, never written, off the JS
/// thread; the caller leaves it alone until the promise settles.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn rechunk_cut(chunk: Buffer, item_size: u32, lo: Vec<f64>, hi: Vec<f64>, boxes: Vec<f64>, pieces: Vec<u32>, headroom: Vec<u32>) -> Result<AsyncTask<CutTask>> {
    let src = to_region(&lo, &hi)?;
    let mut all = to_regions(lo.len(), &boxes)?.into_iter();
    if pieces.len() != headroom.len() || pieces.iter().map(|&n| n as usize).sum::<usize>() != all.len() {
        return Err(invalid("pieces", format!("{} batches of {:?} pieces and {} headrooms for {} boxes", pieces.len(), pieces, headroom.len(), all.len())));
    }
    let batches = pieces.iter().zip(&headroom).map(|(&n, &h)| (h as usize, all.by_ref().take(n as usize).collect())).collect();
    Ok(AsyncTask::new(CutTask { chunk, src, item: item_size as usize, batches }))
}
