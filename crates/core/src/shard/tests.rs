//! Roundtrips of every shape through the layout, and the checker against
//! arbitrary and damaged bytes: it refuses or accepts, never panics, and a
//! shard it accepts can be walked to the end without leaving its columns.

use super::*;
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Null,
    Bool(bool),
    Num(u64),
    Str(Vec<u16>),
    Big(i128),
}

#[derive(Debug, Clone, PartialEq)]
enum Item {
    One(Scalar),
    Pair(Scalar, Scalar),
    Record(Vec<(Vec<u16>, Scalar)>),
    V8,
}

#[derive(Default)]
struct Writer {
    tags: Vec<u8>,
    numbers: Vec<u8>,
    strings: Vec<Vec<u16>>,
    shapes: Vec<Vec<Vec<u16>>>,
    v8: Vec<u8>,
}

fn varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Writer {
    fn scalar(&mut self, s: &Scalar) {
        match s {
            Scalar::Null => self.tags.push(NULL),
            Scalar::Bool(b) => self.tags.push(if *b { TRUE } else { FALSE }),
            Scalar::Num(bits) => {
                self.tags.push(NUMBER);
                self.numbers.extend_from_slice(&bits.to_le_bytes());
            }
            Scalar::Str(s) => {
                self.tags.push(STRING);
                self.strings.push(s.clone());
            }
            Scalar::Big(v) => {
                self.tags.push(BIGINT);
                self.strings.push(v.to_string().encode_utf16().collect());
            }
        }
    }

    fn item(&mut self, i: &Item) {
        match i {
            Item::One(s) => self.scalar(s),
            Item::Pair(a, b) => {
                self.tags.push(PAIR);
                self.scalar(a);
                self.scalar(b);
            }
            Item::Record(fields) => {
                let keys: Vec<Vec<u16>> = fields.iter().map(|(k, _)| k.clone()).collect();
                let id = match self.shapes.iter().position(|s| *s == keys) {
                    Some(id) => id,
                    None => {
                        self.tags.push(SHAPE);
                        varint(&mut self.tags, keys.len() as u32);
                        self.strings.extend(keys.iter().cloned());
                        self.shapes.push(keys);
                        self.shapes.len() - 1
                    }
                };
                self.tags.push(RECORD);
                varint(&mut self.tags, id as u32);
                for (_, v) in fields {
                    self.scalar(v);
                }
            }
            Item::V8 => {
                self.tags.push(V8);
                self.v8.push(0xff);
            }
        }
    }

    fn finish(self, items: u32) -> Vec<u8> {
        let wide = self.strings.iter().flatten().any(|&c| c > 0xff);
        let lengths: Vec<u8> = self.strings.iter().flat_map(|s| (s.len() as u32).to_le_bytes()).collect();
        let chars: Vec<u8> = self.strings.iter().flatten().flat_map(|&c| if wide { c.to_le_bytes().to_vec() } else { vec![c as u8] }).collect();
        encode(&Sections { items, wide, numbers: &self.numbers, lengths: &lengths, chars: &chars, tags: &self.tags, v8: &self.v8 }).unwrap()
    }
}

/// Walks a checked shard as the JS reader does; indexing past a column panics.
fn read(b: &[u8]) -> Vec<Item> {
    let l = layout(b).unwrap();
    let unit = if l.wide { 2 } else { 1 };
    let tags = &b[l.tags_at..l.v8_at];
    let (mut t, mut n, mut s, mut c) = (0usize, 0usize, 0usize, l.chars_at);
    let mut shapes: Vec<Vec<Vec<u16>>> = Vec::new();
    let mut items = Vec::new();
    let next = |t: &mut usize| {
        *t += 1;
        tags[*t - 1]
    };
    let count = |t: &mut usize| {
        let (mut v, mut shift) = (0u32, 0);
        loop {
            let x = next(t);
            v |= ((x & 0x7f) as u32) << shift;
            shift += 7;
            if x & 0x80 == 0 {
                return v;
            }
        }
    };
    let string = |s: &mut usize, c: &mut usize| -> Vec<u16> {
        let len = u32::from_le_bytes(b[l.lengths_at + 4 * *s..l.lengths_at + 4 * *s + 4].try_into().unwrap()) as usize;
        *s += 1;
        let bytes = &b[*c..*c + len * unit];
        *c += len * unit;
        if unit == 2 { bytes.chunks(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect() } else { bytes.iter().map(|&x| x as u16).collect() }
    };
    let scalar = |tag: u8, n: &mut usize, s: &mut usize, c: &mut usize| match tag {
        NULL => Scalar::Null,
        FALSE => Scalar::Bool(false),
        TRUE => Scalar::Bool(true),
        NUMBER => {
            *n += 1;
            Scalar::Num(u64::from_le_bytes(b[l.numbers_at + 8 * (*n - 1)..l.numbers_at + 8 * *n].try_into().unwrap()))
        }
        STRING => Scalar::Str(string(s, c)),
        BIGINT => Scalar::Big(String::from_utf16(&string(s, c)).unwrap().parse().unwrap_or(0)),
        _ => unreachable!(),
    };
    while t < tags.len() {
        match next(&mut t) {
            SHAPE => {
                let k = count(&mut t);
                let keys = (0..k).map(|_| match scalar(STRING, &mut n, &mut s, &mut c) {
                    Scalar::Str(x) => x,
                    _ => unreachable!(),
                });
                shapes.push(keys.collect());
            }
            PAIR => {
                let x = next(&mut t);
                let a = scalar(x, &mut n, &mut s, &mut c);
                let y = next(&mut t);
                items.push(Item::Pair(a, scalar(y, &mut n, &mut s, &mut c)));
            }
            RECORD => {
                let keys = shapes[count(&mut t) as usize].clone();
                let fields = keys.into_iter().map(|k| (k, { let x = next(&mut t); scalar(x, &mut n, &mut s, &mut c) })).collect();
                items.push(Item::Record(fields));
            }
            V8 => items.push(Item::V8),
            x => items.push(Item::One(scalar(x, &mut n, &mut s, &mut c))),
        }
    }
    items
}

fn scalar_strategy() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        Just(Scalar::Null),
        any::<bool>().prop_map(Scalar::Bool),
        any::<u64>().prop_map(Scalar::Num),
        prop::collection::vec(any::<u16>(), 0..20).prop_map(Scalar::Str),
        prop::collection::vec(0u16..0x100, 0..20).prop_map(Scalar::Str),
        any::<i128>().prop_map(Scalar::Big),
    ]
}

fn item_strategy() -> impl Strategy<Value = Item> {
    let key = prop::sample::select(vec!["k", "v", "s", "__proto__", "名前", "0"]).prop_map(|k| k.encode_utf16().collect::<Vec<u16>>());
    prop_oneof![
        scalar_strategy().prop_map(Item::One),
        (scalar_strategy(), scalar_strategy()).prop_map(|(a, b)| Item::Pair(a, b)),
        prop::collection::vec((key, scalar_strategy()), 0..4).prop_map(|mut f| {
            f.sort_by(|a, b| a.0.cmp(&b.0));
            f.dedup_by(|a, b| a.0 == b.0);
            Item::Record(f)
        }),
        Just(Item::V8),
    ]
}

fn shard_of(items: &[Item]) -> Vec<u8> {
    let mut w = Writer::default();
    for i in items {
        w.item(i);
    }
    w.finish(items.len() as u32)
}

#[test]
fn every_shape_roundtrips() {
    let items = vec![
        Item::One(Scalar::Null),
        Item::One(Scalar::Num((-0.0f64).to_bits())),
        Item::One(Scalar::Num(f64::NAN.to_bits())),
        Item::One(Scalar::Big(-12345678901234567890123)),
        Item::Pair(Scalar::Str("key".encode_utf16().collect()), Scalar::Num(3.5f64.to_bits())),
        Item::Record(vec![("k".encode_utf16().collect(), Scalar::Bool(true)), ("v".encode_utf16().collect(), Scalar::Str("é€😀".encode_utf16().collect()))]),
        Item::Record(vec![("k".encode_utf16().collect(), Scalar::Bool(false)), ("v".encode_utf16().collect(), Scalar::Null)]),
        Item::V8,
    ];
    let b = shard_of(&items);
    let l = layout(&b).unwrap();
    assert!(l.wide);
    assert_eq!((l.items, l.v8_items, l.numbers_at % 8), (8, 1, 0));
    assert_eq!(read(&b), items);
    assert_eq!(read(&shard_of(&[])), vec![]);
}

#[test]
fn damaged_shards_are_refused_by_what_is_wrong() {
    let b = shard_of(&[Item::Pair(Scalar::Num(1), Scalar::Str(vec![65, 66]))]);
    let msg = |b: &[u8]| layout(b).unwrap_err().to_string();
    assert!(msg(&b[..b.len() - 1]).contains("sections add up to"), "{}", msg(&b[..b.len() - 1]));
    let mut x = b.clone();
    x[8] = 2;
    assert!(msg(&x).contains("1 items in the tags, 2 in the header"));
    let mut x = b.clone();
    x[4] = 4;
    assert!(msg(&x).contains("unknown flags"));
    assert!(msg(b"\xff\x0f\x00\x00").contains("do not start with a shard header"));
    assert_eq!(layout(&x).unwrap_err().code(), "ERR_SPILLWAY_CORRUPT_VALUE");
    // A bigint must be decimal digits: JS's BigInt() would throw on anything else.
    let mut w = Writer::default();
    w.tags.push(BIGINT);
    w.strings.push("12a".encode_utf16().collect());
    let lengths = 3u32.to_le_bytes();
    let e = encode(&Sections { items: 1, wide: false, numbers: &[], lengths: &lengths, chars: b"12a", tags: &w.tags, v8: &[] }).unwrap_err();
    assert!(e.to_string().contains("a bigint written as \"12a\""), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn shards_roundtrip(items in prop::collection::vec(item_strategy(), 0..40)) {
        let b = shard_of(&items);
        prop_assert_eq!(read(&b), items);
    }

    #[test]
    fn arbitrary_bytes_never_panic(tail in prop::collection::vec(any::<u8>(), 0..200), header in prop::collection::vec(any::<u8>(), 28)) {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&header);
        b.extend_from_slice(&tail);
        if layout(&b).is_ok() {
            read(&b);
        }
        let _ = layout(&tail);
    }

    #[test]
    fn damaged_shards_are_refused_or_walk_safely(items in prop::collection::vec(item_strategy(), 1..20), at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let mut b = shard_of(&items);
        let i = at.index(b.len());
        b[i] = byte;
        match layout(&b) {
            Ok(_) => { read(&b); }
            Err(e) => prop_assert_eq!(e.code(), "ERR_SPILLWAY_CORRUPT_VALUE"),
        }
        let n = cut.index(b.len());
        prop_assert!(layout(&b[..n]).is_err());
    }
}
