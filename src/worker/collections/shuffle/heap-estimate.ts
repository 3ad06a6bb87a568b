// What items take in a worker's memory once deserialized, as V8 lays them
// out (64-bit, pointer compression off): many small objects take several
// times their serialized bytes (a {k, v, s} record of 28 bytes takes about
// 100), so a bound on serialized bytes alone lets a shuffle's output pass
// a worker's limit. Estimated from a sample of the items, not measured:
// heapUsed moves with the collector, this does not.

/** Elements of a container looked at; the rest are taken to be like them. */
const SAMPLE = 32
const MAX_DEPTH = 6
const SLOT = 8
const HEAP_NUMBER = 16
const OBJECT_HEADER = 32
const ARRAY_HEADER = 48
const STRING_HEADER = 16
const VIEW_HEADER = 96
const MAP_ENTRY = 40
const MAP_HEADER = 96
const DATE = 104

function stringBytes(s: string): number {
  // One byte a character where they all fit in Latin-1, else two (V8's two string kinds).
  // eslint-disable-next-line no-control-regex
  const wide = /[^\u0000-\u00ff]/.test(s.length > 256 ? s.slice(0, 256) : s)
  return STRING_HEADER + Math.ceil(((wide ? 2 : 1) * s.length) / 8) * 8
}

function sampled<T>(list: readonly T[], each: (v: T) => number): number {
  if (list.length <= SAMPLE) return list.reduce((a, v) => a + each(v), 0)
  let sum = 0
  const step = list.length / SAMPLE
  for (let i = 0; i < SAMPLE; i++) sum += each(list[Math.floor(i * step)])
  return (sum / SAMPLE) * list.length
}

/** The first SAMPLE of `size` entries, scaled to all of them (a Map or Set has no cheap random access). */
function firstOf<T>(it: Iterator<T>, size: number, each: (v: T) => number): number {
  let sum = 0
  let n = 0
  for (let r = it.next(); !r.done && n < SAMPLE; r = it.next(), n++) sum += each(r.value)
  return n ? (sum / n) * size : 0
}

/** Bytes `v` takes beyond the slot that refers to it. */
function own(v: unknown, depth: number): number {
  switch (typeof v) {
    case 'number':
      return Number.isInteger(v) && Math.abs(v) < 2 ** 31 ? 0 : HEAP_NUMBER
    case 'string':
      return stringBytes(v)
    case 'bigint':
      return HEAP_NUMBER + Math.ceil(v.toString(16).length / 16) * 8
    case 'object':
      break
    default:
      return 0
  }
  if (v === null) return 0
  if (ArrayBuffer.isView(v)) return VIEW_HEADER + v.byteLength
  if (v instanceof ArrayBuffer) return VIEW_HEADER + v.byteLength
  if (depth >= MAX_DEPTH) return OBJECT_HEADER
  if (Array.isArray(v)) return ARRAY_HEADER + sampled(v, (x) => SLOT + own(x, depth + 1))
  if (v instanceof Map) return MAP_HEADER + firstOf(v.entries(), v.size, ([k, x]) => MAP_ENTRY + own(k, depth + 1) + own(x, depth + 1))
  if (v instanceof Set) return MAP_HEADER + firstOf(v.values(), v.size, (x) => MAP_ENTRY + own(x, depth + 1))
  if (v instanceof Date) return DATE
  const keys = Object.keys(v)
  // Property names are shared by every object of one shape: only the values count.
  return OBJECT_HEADER + sampled(keys, (k) => SLOT + own((v as Record<string, unknown>)[k], depth + 1))
}

/** Estimated bytes `items` take in memory once deserialized, the array holding them included. */
export function heapOfItems(items: readonly unknown[]): number {
  return ARRAY_HEADER + sampled(items, (x) => SLOT + own(x, 0))
}

/** Estimated bytes of one value in memory. */
export function heapOf(value: unknown): number {
  return SLOT + own(value, 0)
}
