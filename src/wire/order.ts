// The one order of sort keys (sortBy's sample boundaries, its range
// partitions and its sort; topk). JavaScript's < is no order over mixed
// values (NaN is neither below nor above anything, '10' < 9 is false and
// 9 < '10' true), and a sort or a binary search by it splits equal keys
// and inverts others. Here, ascending:
//
//   false < true < numbers and bigints (by value; 1 before 1n)
//   < strings (by UTF-16 code units, as <) < Dates (by time)
//   < arrays (element by element, a prefix first)
//   < other objects (Maps, Sets, plain objects: a fixed order of their
//     canonical text, so keys equal by wire/key-equality.ts tie)
//
// and the missing keys — NaN, then null, then undefined — after all of
// them whatever the direction (`nullsLast: false` puts them first). Keys
// that tie are exactly the keys equal by the key rule.

import { keyText } from './key-equality'

const enum Rank {
  Boolean,
  Number,
  String,
  Date,
  Array,
  Object,
  NaN,
  Null,
  Undefined,
}

function rankOf(v: unknown): Rank {
  switch (typeof v) {
    case 'number':
      return v === v ? Rank.Number : Rank.NaN
    case 'bigint':
      return Rank.Number
    case 'string':
      return Rank.String
    case 'boolean':
      return Rank.Boolean
    case 'undefined':
      return Rank.Undefined
  }
  if (v === null) return Rank.Null
  if (v instanceof Date) return Rank.Date
  if (Array.isArray(v)) return Rank.Array
  return Rank.Object
}

const sign = (a: any, b: any): number => (a < b ? -1 : a > b ? 1 : 0)

/** The ascending order above; `role` names the key in the error for one that has no value (a function). */
export function compareKeys(a: unknown, b: unknown, role = 'sortBy key'): number {
  if (typeof a === 'number' && typeof b === 'number' && a === a && b === b) return sign(a, b)
  if (typeof a === 'string' && typeof b === 'string') return sign(a, b)
  const ra = rankOf(a)
  const rb = rankOf(b)
  if (ra !== rb) {
    // A function or a symbol has no place: refused by name rather than put anywhere.
    if (ra === Rank.Object) keyText(a, role)
    if (rb === Rank.Object) keyText(b, role)
    return ra - rb
  }
  switch (ra) {
    case Rank.Number:
      // A number and a bigint compare exactly by <; of equal value, the number first.
      return sign(a, b) || (typeof a === typeof b ? 0 : typeof a === 'number' ? -1 : 1)
    case Rank.Boolean:
      return sign(a, b)
    case Rank.Date: {
      const [ta, tb] = [(a as Date).getTime(), (b as Date).getTime()]
      // An invalid Date (time NaN) after the valid ones.
      return ta === tb || (ta !== ta && tb !== tb) ? 0 : ta !== ta ? 1 : tb !== tb ? -1 : sign(ta, tb)
    }
    case Rank.Array: {
      const [x, y] = [a as unknown[], b as unknown[]]
      const n = Math.min(x.length, y.length)
      for (let i = 0; i < n; i++) {
        const c = compareKeys(x[i], y[i], role)
        if (c !== 0) return c
      }
      return x.length - y.length
    }
    case Rank.Object:
      return sign(keyText(a, role), keyText(b, role))
    default:
      // NaN, null, undefined: each equal to itself.
      return 0
  }
}

export interface KeyOrderOptions {
  descending?: boolean
  /** Where NaN, null and undefined go, whatever the direction (default true: last). */
  nullsLast?: boolean
}

const isMissing = (v: unknown): boolean => v == null || (typeof v === 'number' && v !== v)

/** A comparator of keys in the order above, descending or not, with the missing keys last or first. */
export function keyOrder(options: KeyOrderOptions = {}, role?: string): (a: unknown, b: unknown) => number {
  const flip = options.descending ? -1 : 1
  const missingAfter = options.nullsLast === false ? -1 : 1
  return (a, b) => {
    const ma = isMissing(a)
    const mb = isMissing(b)
    if (ma !== mb) return ma ? missingAfter : -missingAfter
    if (ma) return compareKeys(a, b, role)
    // `|| 0`: never -0, which a caller comparing with === 0 would still read as a tie.
    return flip * compareKeys(a, b, role) || 0
  }
}
