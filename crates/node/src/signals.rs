//! A program stops on SIGINT, SIGTERM or SIGHUP whatever its JavaScript
//! thread is doing (spillway_core::signals says how).

use napi_derive::napi;

/// Chains the core's handler in front of Node's, once Node has its own.
#[napi]
pub fn chain_signals() -> napi::Result<()> {
    spillway_core::signals::chain().map_err(crate::error::to_js)
}

/// The JavaScript listener ran for a signal.
#[napi]
pub fn signal_heard() {
    spillway_core::signals::heard()
}

/// Whether the program listens to `signal` ("SIGINT", "SIGTERM", "SIGHUP") itself.
#[napi]
pub fn set_signal_owned(signal: String, owned: bool) {
    if let Some(i) = spillway_core::signals::index_of(&signal) {
        spillway_core::signals::set_owned(i, owned)
    }
}

/// The directories to remove when the core ends the process for a signal.
#[napi]
pub fn set_signal_dirs(dirs: Vec<String>) {
    spillway_core::signals::set_dirs(dirs.into_iter().map(Into::into).collect())
}
