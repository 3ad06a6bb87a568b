// A frame's schema on the client: known when the frame is built (a reader's
// sample, then each step's output types), so an unknown column or a wrong
// type is an error at the line that names it, not in a task later.

import { ArgumentError, SpillwayError } from '../base/errors'
import type { ExprData, FieldSpec } from '../wire/frame'
import { describeExpr, type Aggregate } from './expr'
import { isNumeric, typeOfMore } from './expr-types'

/** ERR_SPILLWAY_COLUMN_NOT_FOUND naming the column and listing those there are. */
export function columnNotFound(name: string, fields: readonly FieldSpec[], what: string): SpillwayError {
  const there = fields.map((f) => JSON.stringify(f.name)).join(', ')
  // No columns at all: a frame whose columns are known only when it runs (mapBatches or toFrame without a schema).
  const none = 'not known before it runs; give mapBatches(fn, { schema }) or toFrame(schema) the columns'
  return new SpillwayError('ERR_SPILLWAY_COLUMN_NOT_FOUND', `${what}: no column ${JSON.stringify(name)}; the columns are ${there || none}`, { column: name, columns: fields.map((f) => f.name) })
}

export function fieldOf(name: string, fields: readonly FieldSpec[], what: string): FieldSpec {
  const f = fields.find((x) => x.name === name)
  if (!f) throw columnNotFound(name, fields, what)
  return f
}

function wrongType(e: ExprData, what: string, allowed: string, got: string): ArgumentError {
  return new ArgumentError([{ field: describeExpr(e), value: got, allowed }], what)
}

/** The type of an expression's values over `fields`, checking every column it names. */
export function typeOf(e: ExprData, fields: readonly FieldSpec[], what: string): string {
  const more = typeOfMore(e, fields, what, typeOf)
  if (more !== undefined) return more
  switch (e.op) {
    case 'col':
      return fieldOf(e.name, fields, what).type
    case 'lit':
      return e.type
    case 'alias':
      return typeOf(e.expr, fields, what)
    case 'isNull':
    case 'isNotNull':
      typeOf(e.expr, fields, what)
      return 'bool'
    case 'not': {
      const t = typeOf(e.expr, fields, what)
      if (t !== 'bool' && t !== 'null') throw wrongType(e, what, 'a boolean expression to negate', t)
      return 'bool'
    }
    case 'and':
    case 'or': {
      for (const side of [e.left, e.right]) {
        const t = typeOf(side, fields, what)
        if (t !== 'bool' && t !== 'null') throw wrongType(side, what, `a boolean expression on each side of ${e.op}`, t)
      }
      return 'bool'
    }
    case 'eq':
    case 'neq':
    case 'gt':
    case 'gtEq':
    case 'lt':
    case 'ltEq': {
      const l = typeOf(e.left, fields, what)
      const r = typeOf(e.right, fields, what)
      if (!(l === r || l === 'null' || r === 'null' || (isNumeric(l) && isNumeric(r)))) throw wrongType(e, what, `sides of one kind to compare (numbers with numbers, strings with strings); the sides are ${l} and ${r}`, `${l} vs ${r}`)
      return 'bool'
    }
    default:
      throw new ArgumentError([{ field: 'expression', value: (e as { op: unknown }).op, allowed: 'an expression built with col, lit and their methods' }], what)
  }
}

/** The name of a selected expression's column. */
export function outputName(e: ExprData, what: string): string {
  if (e.op === 'col' || e.op === 'alias') return e.name
  if (e.op === 'explode') return outputName(e.expr, what)
  throw new ArgumentError([{ field: describeExpr(e), value: 'no name', allowed: 'a column, or an expression with .alias(name)' }], what)
}

/** The type an aggregate gives over a column of type `t` (the core folds integers as int64, floats as float64). */
export function aggregateType(a: Aggregate, fields: readonly FieldSpec[], what: string): string {
  if (a.func === 'count') {
    if (a.column !== undefined) fieldOf(a.column, fields, what)
    return 'int64'
  }
  const t = fieldOf(a.column!, fields, what).type
  if (a.func === 'nUnique') return 'int64'
  if (a.func === 'first' || a.func === 'last') return t
  // Decimals (Parquet's money columns, DuckDB's computed figures) fold as float64: 15 significant digits, as Polars' and pandas' means.
  const decimal = /^decimal(128|256)\(/.test(t)
  if (!(isNumeric(t) || decimal || (t === 'bool' && a.func !== 'std' && a.func !== 'var'))) throw new ArgumentError([{ field: `${a.func}(${JSON.stringify(a.column)})`, value: t, allowed: 'a numeric column (integer, float or decimal, which aggregates as float64)' }], what)
  return a.func === 'mean' || a.func === 'std' || a.func === 'var' || t.startsWith('float') || decimal ? 'float64' : 'int64'
}
