// What the optimizer's rules need to know of an expression: the columns it
// reads, the same expression over renamed columns, its conjuncts, and
// whether it may run on rows it would not have seen before the rewrite
// (a filter moved below a join or another filter sees more rows: it must
// not be one that can fail on some of them, as an integer's % 0 does).

import type { ExprData, FieldSpec } from '../../wire/frame'
import { typeOf } from '../schema'

/** Each sub-expression of `e` (its operands), in order. */
function operands(e: ExprData): ExprData[] {
  return Object.values(e).filter((v): v is ExprData => v !== null && typeof v === 'object' && typeof (v as { op?: unknown }).op === 'string')
}

/** The columns `e` reads. */
export function columnsOf(e: ExprData, into = new Set<string>()): Set<string> {
  if (e.op === 'col') into.add(e.name)
  for (const o of operands(e)) columnsOf(o, into)
  return into
}

/** `e` reading `names[c]` where it read `c`. */
export function renamed(e: ExprData, names: ReadonlyMap<string, string>): ExprData {
  if (e.op === 'col') return names.has(e.name) ? { op: 'col', name: names.get(e.name)! } : e
  const out: Record<string, unknown> = { ...e }
  for (const [k, v] of Object.entries(e)) if (v !== null && typeof v === 'object' && typeof (v as { op?: unknown }).op === 'string') out[k] = renamed(v as ExprData, names)
  return out as ExprData
}

/** Whether `e` or any part of it is an `op`. */
export function uses(e: ExprData, op: string): boolean {
  return e.op === op || operands(e).some((o) => uses(o, op))
}

/** `a and b and …` as its parts; anything else as itself. */
export function conjuncts(e: ExprData): ExprData[] {
  return e.op === 'and' ? [...conjuncts(e.left), ...conjuncts(e.right)] : [e]
}

export function allOf(parts: readonly ExprData[]): ExprData {
  return parts.reduce((a, b) => ({ op: 'and', left: a, right: b }))
}

const SAFE = new Set(['col', 'lit', 'eq', 'neq', 'gt', 'gtEq', 'lt', 'ltEq', 'and', 'or', 'not', 'isNull', 'isNotNull', 'alias', 'fillNull', 'when', 'strContains', 'strStartsWith', 'strLower', 'strUpper', 'strLen', 'strSlice', 'dt'])
const FLOAT_ARITH = new Set(['plus', 'minus', 'multiplyBy', 'divideBy'])

/**
 * Whether `e` gives a value for every row without an error, whatever the
 * rows: comparisons, logic, string tests, date parts, float arithmetic, a
 * literal's cast. Not integer or decimal arithmetic (overflow), %, round,
 * offsets, casts of columns, explode or split.
 */
export function cannotFail(e: ExprData, fields: readonly FieldSpec[]): boolean {
  const ok = SAFE.has(e.op) || (e.op === 'cast' && e.expr.op === 'lit') || (FLOAT_ARITH.has(e.op) && isFloat(e, fields))
  return ok && operands(e).every((o) => cannotFail(o, fields))
}

function isFloat(e: ExprData, fields: readonly FieldSpec[]): boolean {
  try {
    return operands(e).every((o) => typeOf(o, fields, 'plan') === 'float64')
  } catch {
    return false
  }
}
