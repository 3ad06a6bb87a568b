//! Bytes shared with their maker (a frame kernel's output that JS holds
//! too) go into the SpillBuffer without a copy, are counted once, and come
//! back exactly after a spill and a reload.


use std::sync::Arc;

use crate::it::common::random_bytes;
use crate::it::common::spill::buffer;
use spillway_core::spill::StoredBytes;

#[test]
fn a_shared_value_is_stored_and_served_without_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let b = buffer(dir.path(), 1 << 20, 0.9);
    let data = Arc::new(random_bytes(7, 50_000));
    b.set_shared("a", data.clone(), 0).unwrap();
    // The maker's Arc and the buffer's are one allocation, counted once.
    assert_eq!(Arc::strong_count(&data), 2);
    let m = b.metrics();
    assert_eq!((m.managed_bytes, m.memory_bytes), (50_000, 50_000));
    let got = b.peek("a").unwrap().unwrap();
    assert!(Arc::ptr_eq(&got, &data), "peek handed out a copy");
    let Some(StoredBytes::Raw(raw)) = b.get_frame("a").unwrap() else { panic!("not held raw") };
    assert!(Arc::ptr_eq(&raw, &data), "get_frame handed out a copy");
}

#[test]
fn a_shared_value_spills_and_comes_back_exactly_while_its_maker_still_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let b = buffer(dir.path(), 1 << 20, 0.9);
    let data = Arc::new(random_bytes(11, 200_000));
    b.set_shared("a", data.clone(), 0).unwrap();
    assert_eq!(b.evict_until(0), 1);
    let m = b.metrics();
    assert_eq!((m.memory_bytes, m.spilled_memory, m.managed_bytes), (0, 200_000, 200_000));
    // Spilling dropped only the buffer's reference; the maker's bytes are untouched.
    assert_eq!(Arc::strong_count(&data), 1);
    assert_eq!(*b.get("a").unwrap().unwrap(), *data);
    assert_eq!(b.metrics().memory_bytes, 200_000);
    assert!(b.delete("a").unwrap());
    assert_eq!(b.metrics().managed_bytes, 0);
}
