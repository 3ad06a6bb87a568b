//! The worker's memory monitor gives free heap back to the OS before it
//! spills, pauses or is killed for memory (spillway_core::heap says why).

use napi_derive::napi;

/// glibc's `malloc_trim(0)`; true when any memory went back to the OS.
/// Cheap enough to call once per memory check, not per allocation.
#[napi]
pub fn trim_heap() -> bool {
    spillway_core::heap::trim()
}
