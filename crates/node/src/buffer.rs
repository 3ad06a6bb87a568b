use napi::bindgen_prelude::*;
use spillway_core::pool;

/// Hands bytes made by core to JS as a Buffer without a copy. When JS drops
/// it, large ones go back to core's pool instead of the allocator: the next
/// chunk of the same size then reuses pages already faulted in, where fresh
/// ones cost more than compressing into them.
pub(crate) fn to_js_buffer(env: &Env, mut data: Vec<u8>) -> Result<Unknown<'static>> {
    if data.capacity() >= pool::MIN_POOLED && data.len() < data.capacity() / 2 {
        // A compressed frame in a buffer sized for the worst case (or a
        // reused one): JS would hold the whole capacity for the frame's few
        // bytes. Copy the bytes out and keep the large buffer for reuse.
        let small = data.to_vec();
        pool::give(std::mem::replace(&mut data, small));
    }
    let v = if data.capacity() < pool::MIN_POOLED {
        Buffer::from(data).into_unknown(env)?
    } else {
        let (ptr, len) = (data.as_mut_ptr(), data.len());
        // SAFETY: `ptr` points at `len` bytes owned by `data`, which moves
        // into the finalize hint and so lives (without moving its heap
        // buffer) until JS collects the Buffer; only then is it given to
        // the pool.
        unsafe { BufferSlice::from_external(env, ptr, len, data, |_, data| pool::give(data)) }?.to_unknown()
    };
    // SAFETY: the value is handed straight back to JS by the runtime.
    Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(v) })
}
