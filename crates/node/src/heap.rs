//! The worker's memory monitor gives free heap back to the OS before it
//! spills, pauses or is killed for memory (spillway_core::heap says why).

use napi_derive::napi;

/// glibc's `malloc_trim(0)`; true when any memory went back to the OS.
/// Cheap enough to call once per memory check, not per allocation.
#[napi]
pub fn trim_heap() -> bool {
    spillway_core::heap::trim()
}

/// Ends this worker (removing `remove_dir`, its cluster's spill directory)
/// once the process `parent` is gone, from a thread of the core: see
/// spillway_core::orphan.
#[napi]
pub fn watch_parent(parent: u32, remove_dir: Option<String>) -> napi::Result<()> {
    spillway_core::orphan::watch_parent(parent, remove_dir.map(Into::into)).map_err(crate::error::to_js)
}
