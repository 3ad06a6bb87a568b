// The types of the arithmetic, string, date, cast and explode expressions on
// the client (as the core computes them: crates/core/src/frame/expr_fns.rs,
// expr_str.rs), so a wrong type is an ArgumentError naming the expression
// and the type where the frame is built.

import { ArgumentError } from '../base/errors'
import type { ExprData, FieldSpec } from '../wire/frame'
import { describeExpr } from './expr'

export const INTEGER = /^u?int(8|16|32|64)$/
export const isNumeric = (t: string): boolean => INTEGER.test(t) || t === 'float32' || t === 'float64'
export const TYPE_NAME = /^(null|bool|u?int(8|16|32|64)|float(32|64)|utf8|date(32|64)|timestamp\[(s|ms|us|ns)(, [^\]]+)?\])$/

export function wrongType(e: ExprData, what: string, allowed: string, got: string): ArgumentError {
  return new ArgumentError([{ field: describeExpr(e), value: got, allowed }], what)
}

/** The type two sides are read as (the core's common_type), or undefined where they do not meet. */
export function commonType(l: string, r: string): string | undefined {
  if (l === r) return l
  if (l === 'null') return r
  if (r === 'null') return l
  if (INTEGER.test(l) && INTEGER.test(r)) return 'int64'
  if (isNumeric(l) && isNumeric(r)) return 'float64'
  return undefined
}

type TypeOf = (e: ExprData, fields: readonly FieldSpec[], what: string) => string

/** The type of the expressions beyond comparisons and logic; undefined for those. */
export function typeOfMore(e: ExprData, fields: readonly FieldSpec[], what: string, typeOf: TypeOf): string | undefined {
  const input = (x: ExprData, ok: (t: string) => boolean, allowed: string): string => {
    const t = typeOf(x, fields, what)
    if (t !== 'null' && !ok(t)) throw wrongType(e, what, allowed, t)
    return t
  }
  switch (e.op) {
    case 'plus':
    case 'minus':
    case 'multiplyBy':
    case 'modulo':
    case 'divideBy': {
      const l = input(e.left, isNumeric, `numbers on each side of ${e.op}`)
      const r = input(e.right, isNumeric, `numbers on each side of ${e.op}`)
      return e.op !== 'divideBy' && (INTEGER.test(l) || l === 'null') && (INTEGER.test(r) || r === 'null') ? 'int64' : 'float64'
    }
    case 'fillNull': {
      const l = typeOf(e.expr, fields, what)
      const r = typeOf(e.value, fields, what)
      const t = commonType(l, r)
      if (t === undefined) throw wrongType(e, what, `a fill value of the column's kind (the column is ${l})`, r)
      return t
    }
    case 'dtOffsetBy': {
      const t = input(e.expr, (t) => t === 'date32' || t === 'date64' || /^timestamp\[(s|ms|us|ns)\]$/.test(t), 'a date32, date64 or timestamp column without a time zone')
      if (t.startsWith('date') && e.ms % 86_400_000 !== 0) throw wrongType(e, what, "whole days for a date (y, q, mo, w, d); cast it to a timestamp to move it by hours, minutes or seconds", `${t} by ${e.by}`)
      if (t === 'timestamp[s]' && e.ms % 1000 !== 0) throw wrongType(e, what, 'whole seconds for a timestamp[s] column', e.by)
      return t
    }
    case 'round': {
      const t = input(e.expr, isNumeric, 'a number to round')
      return INTEGER.test(t) || t === 'null' ? (t === 'null' ? 'null' : 'int64') : 'float64'
    }
    case 'cast':
      typeOf(e.expr, fields, what)
      if (!TYPE_NAME.test(e.type)) throw wrongType(e, what, "a type: 'bool', 'int8'…'int64', 'uint8'…'uint64', 'float32', 'float64', 'utf8', 'date32', 'date64', 'timestamp[s|ms|us|ns]'", e.type)
      return e.type
    case 'strContains':
    case 'strStartsWith':
      input(e.expr, (t) => t === 'utf8', 'a utf8 column')
      return 'bool'
    case 'strLower':
    case 'strUpper':
    case 'strSlice':
      input(e.expr, (t) => t === 'utf8', 'a utf8 column')
      return 'utf8'
    case 'strLen':
      input(e.expr, (t) => t === 'utf8', 'a utf8 column')
      return 'int64'
    case 'strSplit':
      input(e.expr, (t) => t === 'utf8', 'a utf8 column')
      return 'list<utf8>'
    case 'dt':
      // A time zone's parts need its rules (DuckDB takes the session's zone); the core has none, so it is refused here, not when the compute runs.
      input(e.expr, (t) => t === 'date32' || t === 'date64' || /^timestamp\[(s|ms|us|ns)\]$/.test(t), "a date32, date64 or timestamp column without a time zone (cast a timestamp[us, UTC] column to timestamp[us] first)")
      return 'int32'
    case 'when': {
      input(e.cond, (t) => t === 'bool', 'a boolean condition')
      const l = typeOf(e.then, fields, what)
      const r = typeOf(e.otherwise, fields, what)
      const t = commonType(l, r)
      if (t === undefined) throw wrongType(e, what, `an otherwise of the then branch's kind (then is ${l})`, r)
      return t
    }
    case 'explode': {
      const t = input(e.expr, (t) => t.startsWith('list<'), 'a list column (such as str.split makes)')
      return t === 'null' ? 'null' : t.slice(5, -1)
    }
    default:
      return undefined
  }
}

/** explode() only as a select's or withColumns' expression itself (under an alias at most). */
export function checkExplodes(e: ExprData, what: string, top = true): void {
  if (e.op === 'explode' && !top) throw new ArgumentError([{ field: describeExpr(e), value: 'explode() inside another expression', allowed: "explode() last in a select's expression (before .alias), e.g. col('line').str.split(' ').explode().alias('word')" }], what)
  for (const k of Object.values(e)) {
    if (typeof k === 'object' && k !== null && 'op' in k) checkExplodes(k as ExprData, what, top && e.op === 'alias')
  }
}
