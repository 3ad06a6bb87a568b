//! The one place core errors become JS errors. The stable code leads the
//! message in brackets; the TypeScript layer lifts it into `error.code`.

use napi::{Error, Status};

pub(crate) fn to_js(e: spillway_core::Error) -> Error {
    let status = match e {
        spillway_core::Error::InvalidArgument { .. } => Status::InvalidArg,
        _ => Status::GenericFailure,
    };
    Error::new(status, format!("[{}] {}", e.code(), e))
}

/// A bad argument found while converting JS values, reported as core would.
pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> Error {
    to_js(spillway_core::Error::invalid(field, message))
}

/// JS numbers carry byte counts and seeds; reject what is not a whole,
/// non-negative, exactly representable integer.
pub(crate) fn to_u64(field: &'static str, v: f64) -> napi::Result<u64> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0 {
        Ok(v as u64)
    } else {
        Err(invalid(field, format!("{v} is not a non-negative safe integer")))
    }
}
