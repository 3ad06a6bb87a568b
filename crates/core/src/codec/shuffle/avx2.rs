//! Each kernel takes 32 elements at a time, in whole 32-byte loads and
//! stores whose 128-bit halves are regrouped first. Within every lane a
//! byte permute groups the bytes of equal rank, then unpacks transpose the
//! groups across registers. Lane 0 carries elements 0..16 of the 32 and lane
//! 1 elements 16..32, so each result register is 32 consecutive bytes of
//! one output stream (and the inverse runs the same steps backwards).

use std::arch::x86_64::*;

const GROUP: usize = 32;

#[target_feature(enable = "avx2")]
#[inline]
unsafe fn mask(m: [i8; 16]) -> __m256i {
    let x = _mm_loadu_si128(m.as_ptr().cast());
    _mm256_broadcastsi128_si256(x)
}

/// Byte j of two 8-byte values side by side: (a_j, b_j) words.
const PAIR8: [i8; 16] = [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15];
const UNPAIR8: [i8; 16] = [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15];
/// A 4 × 4 byte transpose: its own inverse.
const QUAD4: [i8; 16] = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];
/// Byte 0 of eight 2-byte values, then byte 1.
const SPLIT2: [i8; 16] = [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15];
const JOIN2: [i8; 16] = [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15];

/// Transposes an 8 × 8 matrix of 16-bit words in each lane (an involution).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn transpose_words(a: [__m256i; 8]) -> [__m256i; 8] {
    let t = [
        _mm256_unpacklo_epi16(a[0], a[1]),
        _mm256_unpackhi_epi16(a[0], a[1]),
        _mm256_unpacklo_epi16(a[2], a[3]),
        _mm256_unpackhi_epi16(a[2], a[3]),
        _mm256_unpacklo_epi16(a[4], a[5]),
        _mm256_unpackhi_epi16(a[4], a[5]),
        _mm256_unpacklo_epi16(a[6], a[7]),
        _mm256_unpackhi_epi16(a[6], a[7]),
    ];
    let u = [
        _mm256_unpacklo_epi32(t[0], t[2]),
        _mm256_unpackhi_epi32(t[0], t[2]),
        _mm256_unpacklo_epi32(t[1], t[3]),
        _mm256_unpackhi_epi32(t[1], t[3]),
        _mm256_unpacklo_epi32(t[4], t[6]),
        _mm256_unpackhi_epi32(t[4], t[6]),
        _mm256_unpacklo_epi32(t[5], t[7]),
        _mm256_unpackhi_epi32(t[5], t[7]),
    ];
    [
        _mm256_unpacklo_epi64(u[0], u[4]),
        _mm256_unpackhi_epi64(u[0], u[4]),
        _mm256_unpacklo_epi64(u[1], u[5]),
        _mm256_unpackhi_epi64(u[1], u[5]),
        _mm256_unpacklo_epi64(u[2], u[6]),
        _mm256_unpackhi_epi64(u[2], u[6]),
        _mm256_unpacklo_epi64(u[3], u[7]),
        _mm256_unpackhi_epi64(u[3], u[7]),
    ]
}

/// Transposes a 4 × 4 matrix of 32-bit words in each lane (an involution).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn transpose_dwords(a: [__m256i; 4]) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi32(a[0], a[1]);
    let t1 = _mm256_unpackhi_epi32(a[0], a[1]);
    let t2 = _mm256_unpacklo_epi32(a[2], a[3]);
    let t3 = _mm256_unpackhi_epi32(a[2], a[3]);
    [
        _mm256_unpacklo_epi64(t0, t2),
        _mm256_unpackhi_epi64(t0, t2),
        _mm256_unpacklo_epi64(t1, t3),
        _mm256_unpackhi_epi64(t1, t3),
    ]
}

/// Full 32-byte loads of the group, paired into the lane layout above:
/// `lanes(v, half)` gives register k lane 0 from load k / 2 of the first
/// half and lane 1 from the same load of the second half.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn split_lanes<const N: usize>(v: [__m256i; N]) -> [__m256i; N] {
    let mut r = [_mm256_setzero_si256(); N];
    for m in 0..N / 2 {
        r[2 * m] = _mm256_permute2x128_si256::<0x20>(v[m], v[N / 2 + m]);
        r[2 * m + 1] = _mm256_permute2x128_si256::<0x31>(v[m], v[N / 2 + m]);
    }
    r
}

/// The inverse of `split_lanes`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn join_lanes<const N: usize>(r: [__m256i; N]) -> [__m256i; N] {
    let mut v = [_mm256_setzero_si256(); N];
    for m in 0..N / 2 {
        v[m] = _mm256_permute2x128_si256::<0x20>(r[2 * m], r[2 * m + 1]);
        v[N / 2 + m] = _mm256_permute2x128_si256::<0x31>(r[2 * m], r[2 * m + 1]);
    }
    v
}

#[target_feature(enable = "avx2")]
#[inline]
unsafe fn load<const N: usize>(p: *const u8) -> [__m256i; N] {
    let mut v = [_mm256_setzero_si256(); N];
    for (k, r) in v.iter_mut().enumerate() {
        *r = _mm256_loadu_si256(p.add(32 * k).cast());
    }
    v
}

#[target_feature(enable = "avx2")]
#[inline]
unsafe fn store<const N: usize>(p: *mut u8, v: [__m256i; N]) {
    for (k, r) in v.into_iter().enumerate() {
        _mm256_storeu_si256(p.add(32 * k).cast(), r);
    }
}

/// The 4- and 8-byte kernels: loads, the byte permute `m`, the
/// transpose, one 32-byte store per output stream.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn shuffle_wide<const N: usize>(s: *const u8, d: *mut u8, n: usize, e: usize, m: [i8; 16], transpose: impl Fn([__m256i; N]) -> [__m256i; N]) {
    let m = mask(m);
    let mut a = split_lanes(load::<N>(s.add(e * N)));
    for r in a.iter_mut() {
        *r = _mm256_shuffle_epi8(*r, m);
    }
    for (j, v) in transpose(a).into_iter().enumerate() {
        _mm256_storeu_si256(d.add(j * n + e).cast(), v);
    }
}

#[target_feature(enable = "avx2")]
#[inline]
unsafe fn shuffle2(s: *const u8, d: *mut u8, n: usize, e: usize) {
    let m = mask(SPLIT2);
    let [r0, r1] = split_lanes(load::<2>(s.add(e * 2)));
    let (r0, r1) = (_mm256_shuffle_epi8(r0, m), _mm256_shuffle_epi8(r1, m));
    _mm256_storeu_si256(d.add(e).cast(), _mm256_unpacklo_epi64(r0, r1));
    _mm256_storeu_si256(d.add(n + e).cast(), _mm256_unpackhi_epi64(r0, r1));
}

/// The inverse of `shuffle_wide`, reading each stream where it lies.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn unshuffle_wide<const N: usize>(s: &[*const u8; N], d: *mut u8, e: usize, m: [i8; 16], transpose: impl Fn([__m256i; N]) -> [__m256i; N]) {
    let m = mask(m);
    let mut v = [_mm256_setzero_si256(); N];
    for (j, r) in v.iter_mut().enumerate() {
        *r = _mm256_loadu_si256(s[j].add(e).cast());
    }
    let mut a = transpose(v);
    for r in a.iter_mut() {
        *r = _mm256_shuffle_epi8(*r, m);
    }
    store(d.add(e * N), join_lanes(a));
}

#[target_feature(enable = "avx2")]
#[inline]
unsafe fn unshuffle2(s: &[*const u8; 2], d: *mut u8, e: usize) {
    let m = mask(JOIN2);
    let v0 = _mm256_loadu_si256(s[0].add(e).cast());
    let v1 = _mm256_loadu_si256(s[1].add(e).cast());
    let r = [_mm256_shuffle_epi8(_mm256_unpacklo_epi64(v0, v1), m), _mm256_shuffle_epi8(_mm256_unpackhi_epi64(v0, v1), m)];
    store(d.add(e * 2), join_lanes(r));
}

/// Runs `kernel` on every whole group of 32 elements; returns how many
/// elements that covered.
#[inline(always)]
unsafe fn each_group(n: usize, mut kernel: impl FnMut(usize)) -> usize {
    let groups = n / GROUP;
    for g in 0..groups {
        kernel(g * GROUP);
    }
    groups * GROUP
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn shuffle(size: usize, src: &[u8], dst: &mut [u8], n: usize) -> usize {
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    match size {
        8 => each_group(n, |e| shuffle_wide::<8>(s, d, n, e, PAIR8, |a| transpose_words(a))),
        4 => each_group(n, |e| shuffle_wide::<4>(s, d, n, e, QUAD4, |a| transpose_dwords(a))),
        _ => each_group(n, |e| shuffle2(s, d, n, e)),
    }
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn unshuffle(streams: &[&[u8]], dst: &mut [u8], n: usize) -> usize {
    let d = dst.as_mut_ptr();
    let mut p = [std::ptr::null::<u8>(); 8];
    for (p, s) in p.iter_mut().zip(streams) {
        *p = s.as_ptr();
    }
    match streams.len() {
        8 => each_group(n, |e| unshuffle_wide::<8>(&p, d, e, UNPAIR8, |a| transpose_words(a))),
        4 => {
            let p = [p[0], p[1], p[2], p[3]];
            // The 4 × 4 byte transpose is its own inverse.
            each_group(n, |e| unshuffle_wide::<4>(&p, d, e, QUAD4, |a| transpose_dwords(a)))
        }
        _ => {
            let p = [p[0], p[1]];
            each_group(n, |e| unshuffle2(&p, d, e))
        }
    }
}
