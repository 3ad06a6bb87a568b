//! Bytes shared between JS and the core without a copy. A frame kernel's
//! output goes to JS as an external Buffer over an `Arc`, noted here (by
//! address and length, weakly) so that `SpillBuffer.set` of that Buffer
//! takes the `Arc` instead of copying it; and a stored value a reader
//! promises never to write (a frame kernel's input, bytes for a socket)
//! goes to JS as an external Buffer over the buffer's own `Arc`. Either way
//! the bytes are counted once, in the SpillBuffer, and freed when the last
//! holder drops them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use napi::bindgen_prelude::*;
use spillway_core::pool;

/// Below this an external Buffer (a finalizer, a GC handle) costs more than a copy.
const MIN_SHARED: usize = 16 << 10;

/// Live kernel outputs by address: their length and their bytes.
static MADE: Mutex<Option<HashMap<usize, (usize, Weak<Vec<u8>>)>>> = Mutex::new(None);

fn made() -> MutexGuard<'static, Option<HashMap<usize, (usize, Weak<Vec<u8>>)>>> {
    MADE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A kernel's output to JS, which the SpillBuffer may later take as it is
/// (see `take`). Its spare capacity is given back first: the buffer counts
/// `len` bytes and should hold no more (shrinking in place costs no copy).
pub(crate) fn to_js_made(env: &Env, mut data: Vec<u8>) -> Result<Unknown<'static>> {
    if data.len() < MIN_SHARED {
        return crate::buffer::to_js_buffer(env, data);
    }
    data.shrink_to_fit();
    let data = Arc::new(data);
    let (at, len) = (data.as_ptr() as usize, data.len());
    made().get_or_insert_with(HashMap::new).insert(at, (len, Arc::downgrade(&data)));
    external(env, data, move |data| {
        let mut m = made();
        if let Some(map) = m.as_mut() {
            if map.get(&at).is_some_and(|(_, w)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(&data))) {
                map.remove(&at);
            }
        }
    })
}

/// The output of `to_js_made` that `bytes` are exactly (same address, same
/// length), while JS still holds it; None for any other bytes.
pub(crate) fn take(bytes: &[u8]) -> Option<Arc<Vec<u8>>> {
    if bytes.len() < MIN_SHARED {
        return None;
    }
    let m = made();
    let (len, w) = m.as_ref()?.get(&(bytes.as_ptr() as usize))?;
    if *len != bytes.len() {
        return None;
    }
    w.upgrade().filter(|a| a.as_ptr() == bytes.as_ptr())
}

/// Stored bytes to JS without a copy, for a reader that never writes them.
pub(crate) fn to_js_shared(env: &Env, data: Arc<Vec<u8>>) -> Result<Unknown<'static>> {
    if data.len() < MIN_SHARED {
        return crate::buffer::to_js_buffer(env, data.to_vec());
    }
    external(env, data, |_| {})
}

fn external(env: &Env, data: Arc<Vec<u8>>, on_drop: impl FnOnce(&Arc<Vec<u8>>) + 'static) -> Result<Unknown<'static>> {
    let (ptr, len) = (data.as_ptr() as *mut u8, data.len());
    // SAFETY: `ptr` points at `len` bytes of the Vec the Arc owns; the Arc
    // moves into the finalize hint, so the bytes live, unmoved, until JS
    // collects the Buffer. Nobody writes them: the core treats them as
    // immutable, and JS gets them only on paths that read (see the callers).
    let v = unsafe {
        BufferSlice::from_external(env, ptr, len, data, move |_, data| {
            on_drop(&data);
            pool::recycle(data)
        })
    }?
    .to_unknown();
    // SAFETY: the value is handed straight back to JS by the runtime.
    Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(v) })
}
