//! `assemble`: a rechunk's new chunk made from pieces held in the buffer (in
//! memory or spilled) and pieces the caller holds, exactly as cutting the
//! old chunk gave them; a piece no longer held yields nothing.


use crate::it::common::random_floats;
use crate::it::common::spill::buffer;
use spillway_core::chunk::rechunk::{cut, Region};
use spillway_core::spill::PieceBytes;

fn region(lo: &[u64], hi: &[u64]) -> Region {
    Region::new(lo.to_vec(), hi.to_vec()).unwrap()
}

#[test]
fn a_new_chunk_is_made_from_held_spilled_and_inline_pieces() {
    let dir = tempfile::tempdir().unwrap();
    let b = buffer(dir.path(), 1 << 20, 0.5);
    // A 6 × 10 float64 array as one old chunk; the new chunk is its columns 3..7, cut in three row bands.
    let whole = region(&[0, 0], &[6, 10]);
    let src = random_floats(9, 60);
    let bands = [region(&[0, 3], &[2, 7]), region(&[2, 3], &[5, 7]), region(&[5, 3], &[6, 7])];
    let pieces = cut(&src, &whole, 8, &[(0, bands.to_vec())]).unwrap();
    let (a, rest) = pieces.split_at(2 * 4 * 8);
    let (c, d) = rest.split_at(3 * 4 * 8);
    b.set("held", a.to_vec()).unwrap();
    b.set("spilled", c.to_vec()).unwrap();
    b.evict_until(0);
    assert_eq!(b.metrics().disk_count, 2);
    let out_box = region(&[0, 3], &[6, 7]);
    let got = b
        .assemble(&out_box, 8, &[(bands[2].clone(), PieceBytes::Bytes(d)), (bands[0].clone(), PieceBytes::Key("held")), (bands[1].clone(), PieceBytes::Key("spilled"))])
        .unwrap()
        .unwrap();
    let want: Vec<u8> = (0..6).flat_map(|r| src[(r * 10 + 3) * 8..(r * 10 + 7) * 8].to_vec()).collect();
    assert_eq!(got, want);
    // Peeked: the spilled pieces stay on disk.
    assert_eq!(b.metrics().disk_count, 2);
    assert!(b.assemble(&out_box, 8, &[(bands[0].clone(), PieceBytes::Key("gone"))]).unwrap().is_none());
}
