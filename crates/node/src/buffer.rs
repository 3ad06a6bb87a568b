use napi::bindgen_prelude::*;
use spillway_core::pool;

/// Hands bytes made by core to JS as a Buffer without a copy. When JS drops
/// it, large ones go back to core's pool instead of the allocator: the next
/// chunk of the same size then reuses pages already faulted in, where fresh
/// ones cost more than compressing into them.
pub(crate) fn to_js_buffer(env: &Env, mut data: Vec<u8>) -> Result<Unknown<'static>> {
    if data.capacity() < pool::MIN_POOLED {
        let v = Buffer::from(data).into_unknown(env)?;
        // SAFETY: the value is handed straight back to JS by the runtime.
        return Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(v) });
    }
    let (ptr, len) = (data.as_mut_ptr(), data.len());
    // SAFETY: `ptr` points at `len` bytes owned by `data`, which moves into
    // the finalize hint and so lives (without moving its heap buffer) until
    // JS collects the Buffer; only then is it given to the pool.
    let slice = unsafe { BufferSlice::from_external(env, ptr, len, data, |_, data| pool::give(data)) }?;
    let v = slice.to_unknown();
    // SAFETY: as above.
    Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(v) })
}
