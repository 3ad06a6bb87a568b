//! The one place core errors become JS errors. The stable code leads the
//! message in brackets; the TypeScript layer lifts it into `error.code`.

use napi::{Error, Status};

pub(crate) fn to_js(e: spillway_core::Error) -> Error {
    Error::new(Status::GenericFailure, format!("[{}] {}", e.code(), e))
}

pub(crate) fn invalid(field: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidArg, format!("[ERR_SPILLWAY_INVALID_ARGUMENT] invalid {field}: {message}"))
}

/// JS numbers carry byte counts and seeds; reject what is not a whole,
/// non-negative, exactly representable integer.
pub(crate) fn to_u64(field: &str, v: f64) -> napi::Result<u64> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0 {
        Ok(v as u64)
    } else {
        Err(invalid(field, format!("{v} is not a non-negative safe integer")))
    }
}
