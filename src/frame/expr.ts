// Expressions and aggregates of frames, as Polars' (named as nodejs-polars
// names them): plain data the client checks against the schema, hashes into
// task keys, and the core evaluates (crates/core/src/frame/expr.rs).

import { ArgumentError } from '../base/errors'
import type { ArithOp, CompareOp, ExprData } from '../wire/frame'
import { ExprDt, ExprStr } from './expr-str'

export type { ExprData } from '../wire/frame'

/** A literal's JS value: numbers (integers, 2^53 and past included, become int64), bigints, strings, booleans, null. */
export type LitValue = number | bigint | string | boolean | Date | null

/**
 * A column expression; built with `col` and `lit`, combined by its methods.
 * `N`, for tsc only, is the columns it names (any where not tracked), so a
 * frame whose columns are known refuses an expression naming another.
 */
export class Expr<N extends string = any> {
  declare readonly '~columns'?: N
  constructor(readonly data: ExprData) {}

  #cmp(op: CompareOp, other: Expr | LitValue): Expr {
    return new Expr({ op, left: this.data, right: exprOf(other, op).data })
  }

  eq<M extends string = never>(other: Expr<M> | LitValue): Expr<N | M> {
    return this.#cmp('eq', other)
  }
  neq<M extends string = never>(other: Expr<M> | LitValue): Expr<N | M> {
    return this.#cmp('neq', other)
  }
  gt<M extends string = never>(other: Expr<M> | LitValue): Expr<N | M> {
    return this.#cmp('gt', other)
  }
  gtEq<M extends string = never>(other: Expr<M> | LitValue): Expr<N | M> {
    return this.#cmp('gtEq', other)
  }
  lt<M extends string = never>(other: Expr<M> | LitValue): Expr<N | M> {
    return this.#cmp('lt', other)
  }
  ltEq<M extends string = never>(other: Expr<M> | LitValue): Expr<N | M> {
    return this.#cmp('ltEq', other)
  }
  /** SQL's three-valued AND: null and false is false, null and true is null. */
  and<M extends string = never>(other: Expr<M> | LitValue): Expr<N | M> {
    return new Expr({ op: 'and', left: this.data, right: exprOf(other, 'and').data })
  }
  or<M extends string = never>(other: Expr<M> | LitValue): Expr<N | M> {
    return new Expr({ op: 'or', left: this.data, right: exprOf(other, 'or').data })
  }
  not(): Expr<N> {
    return new Expr({ op: 'not', expr: this.data })
  }
  isNull(): Expr<N> {
    return new Expr({ op: 'isNull', expr: this.data })
  }
  isNotNull(): Expr<N> {
    return new Expr({ op: 'isNotNull', expr: this.data })
  }
  #arith(op: ArithOp, other: Expr | LitValue): Expr {
    return new Expr({ op, left: this.data, right: exprOf(other, op).data })
  }
  /** Integers stay int64 (an overflow fails the task with ERR_SPILLWAY_FRAME naming the values, as DuckDB's; cast to float64 first for an approximate result), any float makes float64. */
  plus(other: Expr | LitValue): Expr {
    return this.#arith('plus', other)
  }
  minus(other: Expr | LitValue): Expr {
    return this.#arith('minus', other)
  }
  multiplyBy(other: Expr | LitValue): Expr {
    return this.#arith('multiplyBy', other)
  }
  /** Always float64, as Polars' `/` (1 / 0 is Infinity). */
  divideBy(other: Expr | LitValue): Expr {
    return this.#arith('divideBy', other)
  }
  /** The remainder of a truncated division, its sign the dividend's (SQL's and C's %): integers stay int64 (a zero divisor fails the task, as DuckDB's), floats are fmod (x % 0 is NaN). */
  modulo(other: Expr | LitValue): Expr {
    return this.#arith('modulo', other)
  }
  /** Rounded to `decimals` places (negative: to tens, hundreds, …), halves away from zero, as DuckDB's round; integers stay int64. */
  round(decimals = 0): Expr<N> {
    if (!Number.isSafeInteger(decimals) || Math.abs(decimals) > 18) throw new ArgumentError([{ field: 'decimals', value: decimals, allowed: 'an integer from -18 to 18' }], 'round')
    return new Expr({ op: 'round', expr: this.data, decimals })
  }
  /** Nulls replaced by `value` (read as the column's type, numbers widening as in comparisons). */
  fillNull(value: Expr | LitValue): Expr {
    return new Expr({ op: 'fillNull', expr: this.data, value: exprOf(value, 'fillNull').data })
  }
  /** Arrow's cast to `type` ('int64', 'float64', 'utf8', 'date32', …); a value that does not convert fails the task, naming it. */
  cast(type: string): Expr {
    if (typeof type !== 'string') throw new ArgumentError([{ field: 'type', value: type, allowed: "a type name such as 'int64' or 'utf8'" }], 'cast')
    return new Expr({ op: 'cast', expr: this.data, type })
  }
  /** Whether each value is one of `values` (SQL's IN: null where it is null, or where none matches and a null is among them). */
  isIn(values: readonly (Expr | LitValue)[]): Expr<N> {
    if (!Array.isArray(values)) throw new ArgumentError([{ field: 'values', value: values, allowed: 'an array of values (numbers, bigints, strings, booleans, null) or expressions' }], 'isIn')
    if (values.length === 0) return new Expr({ op: 'lit', value: false, type: 'bool' })
    // A balanced tree of ORs: the core reads a plan nested at most about a hundred deep.
    const any = (eqs: ExprData[]): ExprData => (eqs.length === 1 ? eqs[0] : { op: 'or', left: any(eqs.slice(0, eqs.length >> 1)), right: any(eqs.slice(eqs.length >> 1)) })
    return new Expr(any(values.map((v) => ({ op: 'eq', left: this.data, right: exprOf(v, 'isIn').data }) as ExprData)))
  }
  /** `lower <= value <= upper`, both ends included (SQL's BETWEEN). */
  isBetween<M extends string = never>(lower: Expr<M> | LitValue, upper: Expr<M> | LitValue): Expr<N | M> {
    return this.gtEq(lower).and(this.ltEq(upper))
  }
  /** The absolute value (-0.0 is 0.0); the least int64 has none and fails the task, as in DuckDB. */
  abs(): Expr<N> {
    const zero = lit(0).data
    return new Expr({ op: 'when', cond: { op: 'ltEq', left: this.data, right: zero }, then: { op: 'minus', left: zero, right: this.data }, otherwise: this.data })
  }
  /** One row per element of this list column (as str.split makes); the select's other columns repeat. */
  explode(): Expr {
    return new Expr({ op: 'explode', expr: this.data })
  }
  /** String functions: contains, startsWith, endsWith, like, lower, upper, len, split, slice. */
  get str(): ExprStr<Expr> {
    return new ExprStr(this.data, (d) => new Expr(d))
  }
  /** Date parts of a date32 or timestamp column (UTC): year, month, day, weekday, hour, minute, second. */
  get dt(): ExprDt<Expr> {
    return new ExprDt(this.data, (d) => new Expr(d))
  }
  /** The name of this expression's column in a `select`. */
  alias(name: string): Expr<N> {
    if (typeof name !== 'string' || name === '') throw new ArgumentError([{ field: 'name', value: name, allowed: 'a non-empty column name' }], 'alias')
    return new Expr({ op: 'alias', expr: this.data, name })
  }

  toString(): string {
    return describeExpr(this.data)
  }
}

/** The column `name`. */
export function col<N extends string>(name: N): Expr<N> {
  if (typeof name !== 'string' || name === '') throw new ArgumentError([{ field: 'name', value: name, allowed: 'a non-empty column name' }], 'col')
  return new Expr({ op: 'col', name })
}

/** A literal value, compared with columns as SQL does (an int64 column against 2.5 reads both as float64). */
export function lit(value: LitValue): Expr<never> {
  if (value === null) return new Expr({ op: 'lit', value: null, type: 'null' })
  if (typeof value === 'bigint') {
    if (value < -(2n ** 63n) || value >= 2n ** 63n) throw new ArgumentError([{ field: 'value', value, allowed: 'a bigint in int64 range' }], 'lit')
    return new Expr({ op: 'lit', value: value.toString(), type: 'int64' })
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ArgumentError([{ field: 'value', value, allowed: 'a finite number' }], 'lit')
    if (Number.isSafeInteger(value)) return new Expr({ op: 'lit', value, type: 'int64' })
    // An integral number past 2^53 (2^53 itself, 1e18) is still exactly that
    // integer: against an int64 column it compares exactly, as its bigint does.
    if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) return new Expr({ op: 'lit', value: BigInt(value).toString(), type: 'int64' })
    return new Expr({ op: 'lit', value, type: 'float64' })
  }
  if (typeof value === 'string') return new Expr({ op: 'lit', value, type: 'utf8' })
  if (typeof value === 'boolean') return new Expr({ op: 'lit', value, type: 'bool' })
  if (value instanceof Date) {
    // A timestamp[ms] (UTC); against a date or another timestamp column it is read as the column's type (coerce.ts).
    if (Number.isNaN(value.getTime())) throw new ArgumentError([{ field: 'value', value: String(value), allowed: 'a valid Date' }], 'lit')
    return new Expr({ op: 'cast', expr: { op: 'lit', value: value.getTime(), type: 'int64' }, type: 'timestamp[ms]' })
  }
  throw new ArgumentError([{ field: 'value', value, allowed: 'a number, bigint, string, boolean, Date or null' }], 'lit')
}

export function exprOf(v: Expr | LitValue, what: string): Expr {
  if (v instanceof Expr) return v
  try {
    return lit(v)
  } catch {
    throw new ArgumentError([{ field: 'other', value: v, allowed: 'an expression (col, lit) or a number, bigint, string, boolean, Date or null' }], what)
  }
}

export function describeExpr(e: ExprData): string {
  switch (e.op) {
    case 'col':
      return `col(${JSON.stringify(e.name)})`
    case 'lit':
      return `lit(${e.type === 'int64' && typeof e.value === 'string' ? `${e.value}n` : JSON.stringify(e.value)})`
    case 'not':
    case 'isNull':
    case 'isNotNull':
      return `${describeExpr(e.expr)}.${e.op}()`
    case 'alias':
      return `${describeExpr(e.expr)}.alias(${JSON.stringify(e.name)})`
    case 'fillNull':
      return `${describeExpr(e.expr)}.fillNull(${describeExpr(e.value)})`
    case 'cast':
      return `${describeExpr(e.expr)}.cast(${JSON.stringify(e.type)})`
    case 'round':
      return `${describeExpr(e.expr)}.round(${e.decimals})`
    case 'dtOffsetBy':
      return `${describeExpr(e.expr)}.dt.offsetBy(${JSON.stringify(e.by)})`
    case 'explode':
      return `${describeExpr(e.expr)}.explode()`
    case 'strContains':
    case 'strSplit':
      return `${describeExpr(e.expr)}.str.${e.op === 'strContains' ? 'contains' : 'split'}(${e.regex ? `/${e.pattern}/` : JSON.stringify(e.pattern)})`
    case 'strStartsWith':
      return `${describeExpr(e.expr)}.str.startsWith(${JSON.stringify(e.prefix)})`
    case 'strLower':
    case 'strUpper':
    case 'strLen':
      return `${describeExpr(e.expr)}.str.${e.op.slice(3).toLowerCase()}()`
    case 'strSlice':
      return `${describeExpr(e.expr)}.str.slice(${e.offset}${e.length === undefined ? '' : `, ${e.length}`})`
    case 'dt':
      return `${describeExpr(e.expr)}.dt.${e.part}()`
    case 'when':
      return `when(${describeExpr(e.cond)}).then(${describeExpr(e.then)}).otherwise(${describeExpr(e.otherwise)})`
    default:
      return `${describeExpr(e.left)}.${e.op}(${describeExpr(e.right)})`
  }
}

export type AggFunc = 'count' | 'sum' | 'mean' | 'min' | 'max' | 'nUnique' | 'first' | 'last' | 'std' | 'var'

/** An aggregate of `groupBy(...).agg({ name: aggregate })`; nulls skipped, as SQL's. */
export class Aggregate<F extends AggFunc = AggFunc, C extends string = any> {
  /** For tsc only: the column it reads. */
  declare readonly '~column'?: C
  constructor(
    readonly func: F,
    readonly column?: string,
    /** What it aggregates where that is not a column: `sum(col('price').multiplyBy(col('qty')))`. */
    readonly expr?: ExprData,
  ) {}
}

function aggColumn(func: AggFunc, column: string | Expr | undefined, optional: boolean): Aggregate {
  if (column === undefined && optional) return new Aggregate(func)
  if (column instanceof Expr && column.data.op === 'col') return new Aggregate(func, column.data.name)
  if (column instanceof Expr) return new Aggregate(func, undefined, column.data)
  if (typeof column === 'string' && column !== '') return new Aggregate(func, column)
  throw new ArgumentError([{ field: 'column', value: column, allowed: `a column name, col(name) or an expression${optional ? ', or nothing to count rows' : ''}` }], func)
}

/** Rows in the group; with a column, its non-null values. */
export const count = <C extends string = never>(column?: C | Expr<C>) => aggColumn('count', column, true) as Aggregate<'count', C>
export const sum = <C extends string>(column: C | Expr<C>) => aggColumn('sum', column, false) as Aggregate<'sum', C>
export const mean = <C extends string>(column: C | Expr<C>) => aggColumn('mean', column, false) as Aggregate<'mean', C>
export const min = <C extends string>(column: C | Expr<C>) => aggColumn('min', column, false) as Aggregate<'min', C>
export const max = <C extends string>(column: C | Expr<C>) => aggColumn('max', column, false) as Aggregate<'max', C>
/** Distinct non-null values (SQL's COUNT(DISTINCT)); any column type. */
export const nUnique = <C extends string>(column: C | Expr<C>) => aggColumn('nUnique', column, false) as Aggregate<'nUnique', C>
/** The first (last) non-null value in partition order; any column type. */
export const first = <C extends string>(column: C | Expr<C>) => aggColumn('first', column, false) as Aggregate<'first', C>
export const last = <C extends string>(column: C | Expr<C>) => aggColumn('last', column, false) as Aggregate<'last', C>
/** Sample standard deviation and variance (n - 1), as SQL's and Polars' defaults; null below two values. */
export const std = <C extends string>(column: C | Expr<C>) => aggColumn('std', column, false) as Aggregate<'std', C>
export const variance = <C extends string>(column: C | Expr<C>) => aggColumn('var', column, false) as Aggregate<'var', C>
export { variance as var }
