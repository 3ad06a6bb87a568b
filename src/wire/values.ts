// How a task's value is stored as bytes. Binary values (Buffers,
// TypedArrays, ArrayBuffers) are stored as their own bytes, with no copy and
// no serialisation pass; anything else goes through v8.serialize. The type
// travels beside the bytes, as the value's format, which the scheduler keeps
// with the key; so built-in chunks, mapBlocks results and user values are
// all plain bytes the native reductions and the spill buffer read directly.

import { deserialize, serialize } from 'node:v8'
import { ownTaskError, SpillwayError } from '../base/errors'
import { canonical, NotCanonical } from './canonical'

const VIEWS = {
  buffer: Buffer,
  uint8: Uint8Array,
  int8: Int8Array,
  uint8clamped: Uint8ClampedArray,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  float32: Float32Array,
  float64: Float64Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
} as const
type ViewKind = keyof typeof VIEWS

/** How a stored value's bytes are laid out: v8-serialised, an ArrayBuffer, or the elements of a view. */
export type ValueFormat = 'v8' | 'arraybuffer' | `raw:${ViewKind}`

/** Dtypes of array chunks the native reductions read. */
export type RawDtype = 'float64' | 'int64'

const KIND_OF = new Map<unknown, ViewKind>(Object.entries(VIEWS).map(([k, C]) => [C, k as ViewKind]))

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (typeof v === 'object') return (v as object).constructor?.name ?? 'object'
  return typeof v
}

// A Future is known by its shape: wire/ sits below futures/ and cannot import the class.
const isFutureLike = (o: object): boolean => o.constructor?.name === 'Future' && typeof (o as { key?: unknown }).key === 'string'

/**
 * Why `v` cannot be serialised and what to do, naming the part at fault and
 * where it is, never quoting a function's source (v8's message does: `() =>
 * x could not be cloned`, an internal closure's text for a Future).
 */
export function unserializableReason(v: unknown, e: unknown): string {
  const advice = 'return Buffers, TypedArrays or plain data that structured clone accepts (no functions, symbols, Promises or Futures)'
  try {
    canonical(v, { mode: 'exact', refuse: (o) => (isFutureLike(o) ? `a Future (key ${(o as { key: string }).key})` : undefined) })
  } catch (c) {
    if (c instanceof NotCanonical) {
      const future = c.what.startsWith('a Future') ? 'a Future is a handle on a value, not the value: return `await future.result()` instead' : advice
      return `${c.path ? `it holds ${c.what} at ${c.path}` : `it is ${c.what}`}; ${future}`
    }
  }
  const text = String((e as Error)?.message ?? e)
  return `${text.length > 200 ? `${text.slice(0, 200)}…` : text}; ${advice}`
}

/** ERR_SPILLWAY_UNSERIALIZABLE for `v`, which `subject` names; `own` marks it as raised inside a task (its code kept). */
export function unserializable(v: unknown, e: unknown, subject: string, own = false): SpillwayError {
  const message = `${subject} cannot be stored: ${unserializableReason(v, e)}`
  return own ? ownTaskError('ERR_SPILLWAY_UNSERIALIZABLE', message, { type: describe(v) }) : new SpillwayError('ERR_SPILLWAY_UNSERIALIZABLE', message, { type: describe(v) })
}

/** The bytes to store for a value and their format; binary values are not copied. `what` names the value in an error. */
export function encodeValue(v: unknown, what = 'a value'): { bytes: Buffer; format: ValueFormat } {
  if (v instanceof ArrayBuffer) return { bytes: Buffer.from(v), format: 'arraybuffer' }
  if (ArrayBuffer.isView(v)) {
    const kind = KIND_OF.get(v.constructor)
    if (kind) return { bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength), format: `raw:${kind}` }
  }
  try {
    return { bytes: serialize(v), format: 'v8' }
  } catch (e) {
    throw unserializable(v, e, `${what} of type ${describe(v)}`)
  }
}

function corrupt(why: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_CORRUPT_VALUE', `stored value is not readable: ${why}`)
}

/** The value stored as `bytes`: a view over them where alignment allows, else over a copy. */
export function decodeValue(bytes: Uint8Array, format: ValueFormat): unknown {
  if (format === 'v8') return deserialize(bytes)
  if (format === 'arraybuffer') return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
  if (format === 'raw:buffer') return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const C = VIEWS[format.slice(4) as ViewKind] as unknown as { new (b: ArrayBufferLike, o: number, n: number): unknown; BYTES_PER_ELEMENT: number }
  if (!format.startsWith('raw:') || !C) throw corrupt(`unknown format ${format}`)
  const size = C.BYTES_PER_ELEMENT
  if (bytes.byteLength % size !== 0) throw corrupt(`${bytes.byteLength} bytes are not a whole number of ${size}-byte elements`)
  if (bytes.byteOffset % size === 0) return new C(bytes.buffer, bytes.byteOffset, bytes.byteLength / size)
  const copy = new Uint8Array(bytes)
  return new C(copy.buffer, 0, bytes.byteLength / size)
}

/** Bytes of an array chunk from what a mapBlocks function returned. */
export function encodeRaw(v: unknown, dtype: RawDtype, where: string): Buffer {
  const C = VIEWS[dtype]
  if (!(v instanceof C)) {
    throw new SpillwayError('ERR_SPILLWAY_TASK', `${where} returned ${describe(v)}; mapBlocks with dtype '${dtype}' needs a ${C.name}`, { dtype, got: describe(v) })
  }
  const a = v as ArrayBufferView
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength)
}

/**
 * Bytes per element of a value stored in `format`, the unit the spill
 * codec's byte shuffle regroups; 0 where the bytes are not typed values
 * (a Buffer, an ArrayBuffer, v8 data).
 */
export function elementSizeOfFormat(format: ValueFormat): number {
  if (!format.startsWith('raw:') || format === 'raw:buffer') return 0
  return (VIEWS[format.slice(4) as ViewKind] as unknown as { BYTES_PER_ELEMENT?: number })?.BYTES_PER_ELEMENT ?? 0
}

/** A format a peer may name: one of the layouts above, nothing else. */
export function isValueFormat(f: unknown): f is ValueFormat {
  if (f === 'v8' || f === 'arraybuffer') return true
  return typeof f === 'string' && f.startsWith('raw:') && Object.hasOwn(VIEWS, f.slice(4))
}
