// Implicit casts of literals in comparisons, as DuckDB's binder makes them:
// a string or a Date compared with a date or timestamp column is read as a
// value of the column's type, so `col('shipdate').lt('1994-01-01')` and
// `col('at').gtEq(new Date(...))` mean what they say without a cast. The
// rule, applied before the types are checked (schema.ts):
//   - an ISO string ('1994-01-01', or a date and time for a timestamp
//     column) against a temporal column: cast to the column's type;
//   - a Date against a timestamp column: cast to the column's type; against
//     a date column: the Date's day where it is midnight UTC, else the
//     column is read as timestamp[ms] (a day is less than its noon).
// Anything else is left as written: comparing other kinds stays an error.

import { ArgumentError } from '../base/errors'
import type { ExprData, FieldSpec } from '../wire/frame'
import { describeExpr } from './expr'

const COMPARE = new Set(['eq', 'neq', 'gt', 'gtEq', 'lt', 'ltEq'])
const TEMPORAL = /^(date32|date64|timestamp\[)/
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/
const DAY_MS = 86_400_000

type TypeOf = (e: ExprData, fields: readonly FieldSpec[], what: string) => string

/** A Date literal's milliseconds: lit(date) is int64 milliseconds cast to timestamp[ms] (expr.ts). */
function dateMs(e: ExprData): number | undefined {
  return e.op === 'cast' && e.type === 'timestamp[ms]' && e.expr.op === 'lit' && e.expr.type === 'int64' && typeof e.expr.value === 'number' ? e.expr.value : undefined
}

/** `side` (a literal) read as `type`, or undefined where it is not a literal this rule reads. */
function asType(side: ExprData, type: string, what: string): ExprData | undefined {
  if (side.op === 'lit' && side.type === 'utf8') {
    const s = String(side.value)
    const date = type.startsWith('date')
    if (!(date ? ISO_DATE : ISO_DATETIME).test(s)) {
      throw new ArgumentError([{ field: describeExpr(side), value: s, allowed: `an ISO ${date ? "date, 'YYYY-MM-DD'," : "date or date and time ('YYYY-MM-DD', 'YYYY-MM-DDTHH:MM:SS')"} to compare with a ${type} column` }], what)
    }
    return { op: 'cast', expr: side, type }
  }
  const ms = dateMs(side)
  if (ms === undefined) return undefined
  if (type.startsWith('timestamp[')) return type === 'timestamp[ms]' ? side : { op: 'cast', expr: side, type }
  return ms % DAY_MS === 0 ? { op: 'cast', expr: side, type } : undefined
}

/** One comparison's sides with the rule applied. */
function comparison(e: Extract<ExprData, { left: ExprData }>, fields: readonly FieldSpec[], what: string, typeOf: TypeOf): ExprData {
  const l = typeOf(e.left, fields, what)
  const r = typeOf(e.right, fields, what)
  if (TEMPORAL.test(l) && r !== l) {
    const right = asType(e.right, l, what)
    if (right) return { ...e, right }
    if (dateMs(e.right) !== undefined) return { ...e, left: { op: 'cast', expr: e.left, type: 'timestamp[ms]' } }
  }
  if (TEMPORAL.test(r) && r !== l) {
    const left = asType(e.left, r, what)
    if (left) return { ...e, left }
    if (dateMs(e.left) !== undefined) return { ...e, right: { op: 'cast', expr: e.right, type: 'timestamp[ms]' } }
  }
  return e
}

/** `e` with every comparison's literals read as their temporal column's type (see the rule above). */
export function coerced(e: ExprData, fields: readonly FieldSpec[], what: string, typeOf: TypeOf): ExprData {
  let out: ExprData | undefined
  for (const [k, v] of Object.entries(e)) {
    if (typeof v !== 'object' || v === null || !('op' in v)) continue
    const c = coerced(v as ExprData, fields, what, typeOf)
    if (c !== v) (out ??= { ...e }) && Object.assign(out, { [k]: c })
  }
  const next = out ?? e
  return COMPARE.has(next.op) ? comparison(next as Extract<ExprData, { left: ExprData }>, fields, what, typeOf) : next
}
