// `expr.str` and `expr.dt`: the string and date functions of frame
// expressions, named as nodejs-polars names them. Patterns given as RegExp
// are translated to the core's regex syntax here, and checked by the core's
// engine, so a pattern it cannot run is an error at the line that wrote it.
// `E` is the Expr class, handed in by expr.ts so this file needs no import
// of it.

import { ArgumentError, callNativeSync } from '../base/errors'
import { native } from '../native/binding'
import type { DatePart, ExprData } from '../wire/frame'
import { translateRegExp } from './regex'

function pattern(p: string | RegExp, what: string, split: boolean): { pattern: string; regex: boolean } {
  if (typeof p === 'string') return { pattern: p, regex: false }
  if (p instanceof RegExp) {
    const translated = translateRegExp(p, what, split)
    callNativeSync(() => native.frameCheckPattern(translated))
    return { pattern: translated, regex: true }
  }
  throw new ArgumentError([{ field: 'pattern', value: p, allowed: 'a string or a RegExp' }], what)
}

const int = (v: unknown, field: string, what: string, least: number): number => {
  if (!(Number.isSafeInteger(v) && (v as number) >= least)) throw new ArgumentError([{ field, value: v, allowed: `an integer ≥ ${least}` }], what)
  return v as number
}

export class ExprStr<E> {
  constructor(
    readonly data: ExprData,
    readonly make: (d: ExprData) => E,
  ) {}

  /** Whether each string holds `p` (a substring, or a match of a RegExp). */
  contains(p: string | RegExp): E {
    return this.make({ op: 'strContains', expr: this.data, ...pattern(p, 'str.contains', false) })
  }
  startsWith(prefix: string): E {
    if (typeof prefix !== 'string') throw new ArgumentError([{ field: 'prefix', value: prefix, allowed: 'a string' }], 'str.startsWith')
    return this.make({ op: 'strStartsWith', expr: this.data, prefix })
  }
  /** Whether each string ends with `suffix`. */
  endsWith(suffix: string): E {
    if (typeof suffix !== 'string') throw new ArgumentError([{ field: 'suffix', value: suffix, allowed: 'a string' }], 'str.endsWith')
    // The last characters compared (slice counts code points, as the suffix's length here does); '' ends every string.
    const n = [...suffix].length
    if (n === 0) return this.make({ op: 'gtEq', left: { op: 'strLen', expr: this.data }, right: { op: 'lit', value: 0, type: 'int64' } })
    return this.make({ op: 'eq', left: { op: 'strSlice', expr: this.data, offset: -n }, right: { op: 'lit', value: suffix, type: 'utf8' } })
  }
  /** SQL's LIKE over the whole string: `%` any run of characters, `_` one character, all else itself (case counts). */
  like(sqlPattern: string): E {
    if (typeof sqlPattern !== 'string') throw new ArgumentError([{ field: 'pattern', value: sqlPattern, allowed: "a LIKE pattern such as '%BRASS' or 'forest%'" }], 'str.like')
    const body = [...sqlPattern].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[\\.+*?()|[\]{}^$#&\-~]/g, '\\$&'))).join('')
    const translated = `^(?s:${body})$`
    callNativeSync(() => native.frameCheckPattern(translated))
    return this.make({ op: 'strContains', expr: this.data, pattern: translated, regex: true })
  }
  lower(): E {
    return this.make({ op: 'strLower', expr: this.data })
  }
  upper(): E {
    return this.make({ op: 'strUpper', expr: this.data })
  }
  /** Characters (Unicode code points) in each string, as int64. */
  len(): E {
    return this.make({ op: 'strLen', expr: this.data })
  }
  /** Each string cut at `by` (a string or a RegExp without capturing groups), as a list<utf8> column; `.explode()` gives one row per piece. */
  split(by: string | RegExp): E {
    return this.make({ op: 'strSplit', expr: this.data, ...pattern(by, 'str.split', true) })
  }
  /** `length` characters from `offset` (from the end when negative), or to the end. */
  slice(offset: number, length?: number): E {
    if (!Number.isSafeInteger(offset)) throw new ArgumentError([{ field: 'offset', value: offset, allowed: 'an integer (negative counts from the end)' }], 'str.slice')
    return this.make({ op: 'strSlice', expr: this.data, offset, ...(length === undefined ? {} : { length: int(length, 'length', 'str.slice', 0) }) })
  }
}

export class ExprDt<E> {
  constructor(
    readonly data: ExprData,
    readonly make: (d: ExprData) => E,
  ) {}

  #part(part: DatePart): E {
    return this.make({ op: 'dt', expr: this.data, part })
  }
  year(): E {
    return this.#part('year')
  }
  /** 1 to 12. */
  month(): E {
    return this.#part('month')
  }
  day(): E {
    return this.#part('day')
  }
  /** ISO: 1 is Monday, 7 Sunday (as Polars'). */
  weekday(): E {
    return this.#part('weekday')
  }
  hour(): E {
    return this.#part('hour')
  }
  minute(): E {
    return this.#part('minute')
  }
  second(): E {
    return this.#part('second')
  }
  /**
   * Moved by a duration, as Polars' `dt.offset_by`: '1y', '3mo', '2q', '90d',
   * '-1w', '1y2mo', and for timestamps also 'h', 'm', 's', 'ms'. Months go
   * first, a day past the month's end held to it ('2020-01-31' + '1mo' is
   * '2020-02-29', as DuckDB's `+ INTERVAL`), then days, then time.
   */
  offsetBy(by: string): E {
    return this.make({ op: 'dtOffsetBy', expr: this.data, by, ...durationOf(by) })
  }
}

const UNIT_MONTHS: Record<string, number> = { y: 12, q: 3, mo: 1 }
const UNIT_DAYS: Record<string, number> = { w: 7, d: 1 }
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 }

/** '1y2mo-…' as months, days and milliseconds (each token's sign the string's). */
export function durationOf(by: string): { months: number; days: number; ms: number } {
  const m = typeof by === 'string' ? /^(-?)((?:\d+(?:y|q|mo|w|d|h|ms|m|s))+)$/.exec(by) : null
  if (!m) throw new ArgumentError([{ field: 'by', value: by, allowed: "a duration such as '1y', '3mo', '2q', '90d', '2w', '-1y6mo', or for timestamps '12h', '30m', '10s', '500ms'" }], 'dt.offsetBy')
  const sign = m[1] === '-' ? -1 : 1
  const out = { months: 0, days: 0, ms: 0 }
  for (const [, n, unit] of m[2].matchAll(/(\d+)(y|q|mo|w|d|h|ms|m|s)/g)) {
    const k = Number(n) * sign
    if (unit in UNIT_MONTHS) out.months += k * UNIT_MONTHS[unit]
    else if (unit in UNIT_DAYS) out.days += k * UNIT_DAYS[unit]
    else out.ms += k * UNIT_MS[unit]
  }
  if (Math.abs(out.months) >= 2 ** 31 || Math.abs(out.days) >= 2 ** 31 || !Number.isSafeInteger(out.ms)) {
    throw new ArgumentError([{ field: 'by', value: by, allowed: 'a duration of fewer than 2^31 months and days' }], 'dt.offsetBy')
  }
  return out
}
