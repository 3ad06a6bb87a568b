//! Runtime choice of the widest vector unit the CPU has. Kernels are written
//! once, as plain Rust over fixed lanes, and compiled again inside functions
//! that enable AVX2 or AVX-512, so the binary stays portable (no target-cpu)
//! while each machine runs the widest code it can. The lane structure, and so
//! every floating-point result, is the same whichever copy runs.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    Base,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

fn detect() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        let avx512 = is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512vl");
        let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") && is_x86_feature_detected!("bmi2");
        // SPILLWAY_SIMD lowers the level (never raises it past the CPU), so
        // tests can prove every copy of a kernel gives the same bytes.
        let cap = std::env::var("SPILLWAY_SIMD").unwrap_or_default();
        return match cap.as_str() {
            "base" => Level::Base,
            "avx2" if avx2 => Level::Avx2,
            _ if avx512 && avx2 && cap != "avx2" => Level::Avx512,
            _ if avx2 => Level::Avx2,
            _ => Level::Base,
        };
    }
    #[allow(unreachable_code)]
    Level::Base
}

#[inline]
pub(crate) fn level() -> Level {
    static LEVEL: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(detect)
}

/// The kernel level in use, for benchmarks and diagnostics:
/// "avx512", "avx2" or "base".
pub fn simd_level() -> &'static str {
    match level() {
        Level::Base => "base",
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => "avx2",
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => "avx512",
    }
}

/// Defines `$name(args) -> ret` that runs the `#[inline(always)]` generic
/// body `$body` compiled for the best available level.
macro_rules! dispatch {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty => $body:path) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma,bmi2")]
                unsafe fn avx512($($arg: $ty),*) -> $ret {
                    $body($($arg),*)
                }
                #[target_feature(enable = "avx2,fma,bmi2")]
                unsafe fn avx2($($arg: $ty),*) -> $ret {
                    $body($($arg),*)
                }
                match $crate::chunk::simd::level() {
                    // SAFETY: the CPU was just checked for these features.
                    $crate::chunk::simd::Level::Avx512 => return unsafe { avx512($($arg),*) },
                    $crate::chunk::simd::Level::Avx2 => return unsafe { avx2($($arg),*) },
                    $crate::chunk::simd::Level::Base => {}
                }
            }
            $body($($arg),*)
        }
    };
}

pub(crate) use dispatch;

