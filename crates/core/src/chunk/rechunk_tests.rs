use super::*;
use proptest::prelude::*;

/// The byte offset of array point `p` in the row-major layout of `r`: the naive index loop.
fn offset(r: &Region, p: &[u64], item: usize) -> usize {
    let mut o = 0usize;
    for d in 0..p.len() {
        o = o * (r.hi[d] - r.lo[d]) as usize + (p[d] - r.lo[d]) as usize;
    }
    o * item
}

/// Every point of `r`, row-major.
fn points(r: &Region) -> Vec<Vec<u64>> {
    let mut out = vec![vec![]];
    for d in 0..r.lo.len() {
        out = out.into_iter().flat_map(|p| (r.lo[d]..r.hi[d]).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    out
}

fn naive_piece(src: &[u8], src_box: &Region, part: &Region, item: usize) -> Vec<u8> {
    points(part).iter().flat_map(|p| src[offset(src_box, p, item)..offset(src_box, p, item) + item].to_vec()).collect()
}

fn bytes_for(r: &Region, item: usize, seed: u8) -> Vec<u8> {
    (0..r.len() * item).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// A box of up to 3 dimensions of up to 9 elements, and sub-boxes of it
/// (drawn as fractions of each dimension, so some are whole rows).
fn boxes() -> impl Strategy<Value = (Region, Vec<Region>, usize)> {
    (1usize..=3, prop::sample::select(vec![1usize, 2, 4, 8])).prop_flat_map(|(n, item)| {
        let dims = prop::collection::vec((0u64..4, 1u64..9), n);
        let cuts = prop::collection::vec(prop::collection::vec((0u64..=8, 0u64..=8), n), 0..6);
        (dims, cuts, Just(item)).prop_map(|(dims, cuts, item)| {
            let outer = Region::new(dims.iter().map(|d| d.0).collect(), dims.iter().map(|d| d.0 + d.1).collect()).unwrap();
            let parts = cuts
                .into_iter()
                .map(|c| {
                    let (mut lo, mut hi) = (vec![], vec![]);
                    for (d, (a, b)) in c.into_iter().enumerate() {
                        let span = outer.hi[d] - outer.lo[d];
                        let (a, b) = (a.min(span), b.min(span));
                        lo.push(outer.lo[d] + a.min(b));
                        hi.push(outer.lo[d] + a.max(b));
                    }
                    Region::new(lo, hi).unwrap()
                })
                .collect();
            (outer, parts, item)
        })
    })
}

proptest! {
    #[test]
    fn cut_matches_the_index_loop((outer, parts, item) in boxes(), headroom in 0usize..5) {
        let src = bytes_for(&outer, item, 7);
        let split = parts.len() / 2;
        let batches = vec![(headroom, parts[..split].to_vec()), (0, parts[split..].to_vec())];
        let got = cut(&src, &outer, item, &batches).unwrap();
        let mut want = vec![];
        for (room, pieces) in &batches {
            want.extend(vec![0u8; *room]);
            want.extend(pieces.iter().flat_map(|p| naive_piece(&src, &outer, p, item)));
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn assemble_matches_the_index_loop((outer, _, item) in boxes(), step in prop::collection::vec(1u64..5, 3)) {
        // The out box tiled by a grid of blocks of `step`, each piece cut naively from a source array.
        let src = bytes_for(&outer, item, 3);
        let mut pieces: Vec<Region> = vec![];
        let mut tiles = vec![(vec![], vec![])];
        for d in 0..outer.lo.len() {
            let mut next = vec![];
            for (lo, hi) in &tiles {
                let mut a = outer.lo[d];
                while a < outer.hi[d] {
                    let b = (a + step[d]).min(outer.hi[d]);
                    next.push(([lo.clone(), vec![a]].concat(), [hi.clone(), vec![b]].concat()));
                    a = b;
                }
            }
            tiles = next;
        }
        for (lo, hi) in tiles {
            pieces.push(Region::new(lo, hi).unwrap());
        }
        let data: Vec<Vec<u8>> = pieces.iter().map(|p| naive_piece(&src, &outer, p, item)).collect();
        let refs: Vec<(&Region, &[u8])> = pieces.iter().zip(&data).map(|(p, d)| (p, &d[..])).collect();
        let mut out = vec![0u8; src.len()];
        assemble_into(&mut out, &outer, item, &refs).unwrap();
        prop_assert_eq!(out, src);
    }
}

#[test]
fn boxes_outside_the_chunk_and_wrong_lengths_are_refused() {
    let outer = Region::new(vec![0, 0], vec![4, 4]).unwrap();
    let src = vec![0u8; 4 * 4 * 8];
    let out_of = Region::new(vec![2, 2], vec![5, 4]).unwrap();
    let e = cut(&src, &outer, 8, &[(0, vec![out_of.clone()])]).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_INVALID_ARGUMENT");
    assert!(e.to_string().contains("not inside the chunk"), "{e}");
    let e = cut(&src[1..], &outer, 8, &[]).unwrap_err();
    assert!(e.to_string().contains("127 bytes"), "{e}");
    let mut out = vec![0u8; 128];
    let e = assemble_into(&mut out, &outer, 8, &[(&out_of, &[0u8; 48][..])]).unwrap_err();
    assert!(e.to_string().contains("not inside the new chunk"), "{e}");
    let inside = Region::new(vec![0, 0], vec![1, 4]).unwrap();
    let e = assemble_into(&mut out, &outer, 8, &[(&inside, &[0u8; 31][..])]).unwrap_err();
    assert!(e.to_string().contains("31 bytes"), "{e}");
    assert!(cut(&src, &outer, 3, &[]).unwrap_err().to_string().contains("itemSize"));
    assert!(Region::new(vec![3], vec![2]).is_err());
}

#[test]
fn whole_rows_are_one_run() {
    let outer = Region::new(vec![0, 0], vec![1000, 100]).unwrap();
    let rows = Region::new(vec![10, 0], vec![20, 100]).unwrap();
    let mut n = 0;
    runs(&outer, &rows, &rows, 8, |_, _, bytes| {
        n += 1;
        assert_eq!(bytes, 10 * 100 * 8);
    });
    assert_eq!(n, 1);
}
