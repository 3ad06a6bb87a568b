// A shuffle shard's items as the core's binary layout (crates/core/src/shard):
// strings, numbers, bigints, booleans, null, [key, value] pairs of those and
// flat records of those go into columns — one tag stream, the numbers as
// f64, every string in one run of characters — and any other item into one
// v8.serialize blob, a tag per item saying which. JS walks the values (each
// napi call per value would cost more than the value); the core writes the
// layout and checks a shard whole before any of it is read. A record's keys
// are written once per shape, not once per record as v8.serialize does.

import { endianness } from 'node:os'
import { deserialize, serialize } from 'node:v8'
import { callNativeSync, SpillwayError } from '../../../base/errors'
import { native } from '../../../native/binding'

const NULL = 0
const FALSE = 1
const TRUE = 2
const NUMBER = 3
const STRING = 4
const BIGINT = 5
const PAIR = 6
const RECORD = 7
const SHAPE = 8
const V8 = 9

// Numbers are read as a Float64Array view: the layout is little-endian.
const USABLE = endianness() === 'LE'

/** Tag of a value that goes in a column, or -1. */
function scalarTag(v: unknown): number {
  switch (typeof v) {
    case 'number':
      return NUMBER
    case 'string':
      return STRING
    case 'boolean':
      return v ? TRUE : FALSE
    case 'bigint':
      return BIGINT
    case 'object':
      return v === null ? NULL : -1
    default:
      return -1
  }
}

/** Whether `for...in` on a plain object lists its own keys only (nothing enumerable was added to Object.prototype). */
function prototypeClean(): boolean {
  // eslint-disable-next-line no-unreachable-loop
  for (const _ in {}) return false
  return true
}

/**
 * The walk writes straight into typed arrays sized from the item count
 * (grown when short), and a record of the shape seen last is checked and
 * written by `for...in` over its keys, which V8 runs from the shape's enum
 * cache: no Object.keys / Object.values arrays per record, the garbage
 * that made the walk and its collector the top of a split's profile.
 */
class Writer {
  tags: Uint8Array
  t = 0
  numbers: Float64Array
  n = 0
  strings: string[] = []
  lengths: Uint32Array
  v8: unknown[] = []
  shapes = new Map<string, number>()
  lastKeys: string[] | undefined
  lastShape = -1
  readonly forIn = prototypeClean()

  constructor(items: number) {
    this.tags = new Uint8Array(items * 6 + 64)
    this.numbers = new Float64Array(items + 16)
    this.lengths = new Uint32Array(items * 2 + 16)
  }

  /** Room for `k` more tag bytes. */
  room(k: number): void {
    if (this.t + k <= this.tags.length) return
    const next = new Uint8Array(Math.max(this.tags.length * 2, this.t + k))
    next.set(this.tags.subarray(0, this.t))
    this.tags = next
  }

  tag(b: number): void {
    this.room(1)
    this.tags[this.t++] = b
  }

  count(v: number): void {
    while (v >= 0x80) {
      this.tag((v & 0x7f) | 0x80)
      v >>>= 7
    }
    this.tag(v)
  }

  string(v: string): void {
    if (this.strings.length === this.lengths.length) {
      const next = new Uint32Array(this.lengths.length * 2)
      next.set(this.lengths)
      this.lengths = next
    }
    this.lengths[this.strings.length] = v.length
    this.strings.push(v)
  }

  number(v: number): void {
    if (this.n === this.numbers.length) {
      const next = new Float64Array(this.numbers.length * 2)
      next.set(this.numbers)
      this.numbers = next
    }
    this.numbers[this.n++] = v
  }

  /** Writes `v` if it goes in a column (one tag byte of room made by the caller); false, writing nothing, if not. */
  scalar(v: unknown): boolean {
    switch (typeof v) {
      case 'number':
        this.tags[this.t++] = NUMBER
        this.number(v)
        return true
      case 'string':
        this.tags[this.t++] = STRING
        this.string(v)
        return true
      case 'boolean':
        this.tags[this.t++] = v ? TRUE : FALSE
        return true
      case 'bigint':
        this.tags[this.t++] = BIGINT
        this.string(v.toString())
        return true
      case 'object':
        if (v !== null) return false
        this.tags[this.t++] = NULL
        return true
      default:
        return false
    }
  }

  /** The shape id of `keys`, defined in the stream the first time it is seen. */
  shape(keys: string[]): number {
    const last = this.lastKeys
    if (last && last.length === keys.length) {
      let same = true
      for (let i = 0; i < keys.length && same; i++) same = last[i] === keys[i]
      if (same) return this.lastShape
    }
    const sig = keys.join('\u0000')
    let id = this.shapes.get(sig)
    if (id === undefined) {
      id = this.shapes.size
      this.shapes.set(sig, id)
      this.tag(SHAPE)
      this.count(keys.length)
      for (const k of keys) this.string(k)
    }
    this.lastKeys = keys
    this.lastShape = id
    return id
  }

  /** Whether `v` has the keys of the shape written last, in order, each holding a column value. */
  sameShape(v: object, keys: string[]): boolean {
    let i = 0
    for (const k in v) {
      if (k !== keys[i] || scalarTag((v as Record<string, unknown>)[k]) < 0) return false
      i++
    }
    return i === keys.length
  }

  item(v: unknown): void {
    this.room(1)
    if (this.scalar(v)) return
    if (Array.isArray(v)) {
      if (v.length === 2) {
        const a = v[0]
        const b = v[1]
        if (scalarTag(a) >= 0 && scalarTag(b) >= 0) {
          this.room(3)
          this.tags[this.t++] = PAIR
          this.scalar(a)
          this.scalar(b)
          return
        }
      }
    } else if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      const keys = this.lastKeys
      if (this.forIn && keys !== undefined && this.sameShape(v as object, keys)) {
        this.room(keys.length + 8)
        this.tags[this.t++] = RECORD
        this.count(this.lastShape)
        for (const k in v as object) this.scalar((v as Record<string, unknown>)[k])
        return
      }
      // The builtins read the properties once each, faster than a loop of keyed loads.
      const values = Object.values(v as object)
      let flat = true
      for (let i = 0; i < values.length && flat; i++) flat = scalarTag(values[i]) >= 0
      if (flat) {
        const id = this.shape(Object.keys(v as object))
        this.tag(RECORD)
        this.count(id)
        this.room(values.length)
        for (let i = 0; i < values.length; i++) this.scalar(values[i])
        return
      }
    }
    this.tag(V8)
    this.v8.push(v)
  }
}

/** Items looked at to choose the layout. */
const LOOK = 8

/**
 * Whether the first items hold a pair or a flat record: bare strings,
 * numbers and bigints v8.serialize writes and reads faster than the
 * columns, pairs and records slower (bench/shuffle/codec.js, BENCHMARKS.md).
 */
function worthColumns(items: readonly unknown[]): boolean {
  for (let i = 0; i < items.length && i < LOOK; i++) {
    const v = items[i]
    if (typeof v === 'object' && v !== null && (Array.isArray(v) ? v.length === 2 : Object.getPrototypeOf(v) === Object.prototype)) return true
  }
  return false
}

/**
 * `items` as one shard: the binary layout when its first items are pairs
 * or records, else v8.serialize of the array as before. Throws what
 * v8.serialize throws for an item that cannot be serialized.
 */
export function encodeShard(items: readonly unknown[]): Buffer {
  if (!USABLE || !worthColumns(items)) return serialize(items)
  const w = new Writer(items.length)
  for (const v of items) w.item(v)
  if (w.v8.length === items.length) return serialize(items)
  const chars = w.strings.join('')
  // eslint-disable-next-line no-control-regex
  const wide = /[^\u0000-\u00ff]/.test(chars)
  const bytes = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)
  return callNativeSync(() =>
    native.shardEncode(items.length, wide, bytes(w.numbers.subarray(0, w.n)), bytes(w.lengths.subarray(0, w.strings.length)), Buffer.from(chars, wide ? 'utf16le' : 'latin1'), bytes(w.tags.subarray(0, w.t)), w.v8.length ? serialize(w.v8) : Buffer.alloc(0)),
  )
}

/** Whether `data` is a binary shard (else a v8.serialize blob). */
export function isBinaryShard(data: Uint8Array): boolean {
  return data.byteLength >= 4 && data[0] === 0x53 && data[1] === 0x57 && data[2] === 0x42 && data[3] === 0x31
}

function view<T>(data: Buffer, at: number, count: number, size: number, Kind: new (b: ArrayBuffer, o: number, n: number) => T): T {
  const off = data.byteOffset + at
  if (off % size === 0) return new Kind(data.buffer as ArrayBuffer, off, count)
  // Not aligned in its buffer (a slice of a larger one): copied once.
  const copy = new Uint8Array(count * size)
  copy.set(data.subarray(at, at + count * size))
  return new Kind(copy.buffer, 0, count)
}

class Reader {
  t: number
  n = 0
  s = 0
  c = 0
  readonly shapes: ((r: Reader) => Record<string, unknown>)[] = []
  v = 0

  constructor(
    readonly tags: Buffer,
    readonly numbers: Float64Array,
    readonly lengths: Uint32Array,
    readonly chars: string,
    readonly v8: unknown[],
  ) {
    this.t = 0
  }

  count(): number {
    let v = 0
    let shift = 0
    for (;;) {
      const b = this.tags[this.t++]
      v += (b & 0x7f) * 2 ** shift
      if (b < 0x80) return v
      shift += 7
    }
  }

  string(): string {
    const len = this.lengths[this.s++]
    const out = this.chars.slice(this.c, this.c + len)
    this.c += len
    return out
  }

  scalar(): unknown {
    switch (this.tags[this.t++]) {
      case NULL:
        return null
      case FALSE:
        return false
      case TRUE:
        return true
      case NUMBER:
        return this.numbers[this.n++]
      case STRING:
        return this.string()
      default:
        // The core checked the rest: a bigint written as decimal digits.
        return BigInt(this.string())
    }
  }

  /** A function that builds a record of these keys with one object literal, so every record of a shape shares V8's hidden class. */
  defineShape(): void {
    const keys = Array.from({ length: this.count() }, () => this.string())
    const fields = keys.map((k) => `${k === '__proto__' ? '["__proto__"]' : JSON.stringify(k)}: r.scalar()`)
    this.shapes.push(new Function('r', `return { ${fields.join(', ')} }`) as (r: Reader) => Record<string, unknown>)
  }

  items(n: number): unknown[] {
    const out = new Array<unknown>(n)
    let i = 0
    while (i < n) {
      const tag = this.tags[this.t]
      if (tag === SHAPE) {
        this.t++
        this.defineShape()
      } else if (tag === PAIR) {
        this.t++
        const a = this.scalar()
        out[i++] = [a, this.scalar()]
      } else if (tag === RECORD) {
        this.t++
        out[i++] = this.shapes[this.count()](this)
      } else if (tag === V8) {
        this.t++
        out[i++] = this.v8[this.v++]
      } else out[i++] = this.scalar()
    }
    return out
  }
}

/** A shard's items, from either layout. */
export function decodeShard(data: Buffer): unknown[] {
  if (!isBinaryShard(data)) return deserialize(data) as unknown[]
  const [items, wide, numbersAt, numbers, lengthsAt, strings, charsAt, charBytes, tagsAt, tags, v8At, v8Bytes, v8Items] = callNativeSync(() => native.shardLayout(data))
  let v8: unknown[] = []
  if (v8Bytes) {
    try {
      v8 = deserialize(data.subarray(v8At, v8At + v8Bytes)) as unknown[]
    } catch (e: any) {
      throw new SpillwayError('ERR_SPILLWAY_CORRUPT_VALUE', `corrupt shuffle shard: its v8 blob of ${v8Bytes} bytes cannot be read (${e?.message ?? e})`, {}, { cause: e })
    }
    if (!Array.isArray(v8) || v8.length !== v8Items) throw new SpillwayError('ERR_SPILLWAY_CORRUPT_VALUE', `corrupt shuffle shard: its v8 blob holds ${Array.isArray(v8) ? v8.length : typeof v8} items where its tags name ${v8Items}`)
  }
  const r = new Reader(
    data.subarray(tagsAt, tagsAt + tags),
    view(data, numbersAt, numbers, 8, Float64Array),
    view(data, lengthsAt, strings, 4, Uint32Array),
    data.toString(wide ? 'utf16le' : 'latin1', charsAt, charsAt + charBytes),
    v8,
  )
  return r.items(items)
}

