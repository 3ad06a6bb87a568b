// The differential suite's queries: each is plain data (so fast-check can
// shrink it and a failure can print it), and two functions read it — one
// builds the spillway frame a user would write, the other the DuckDB SQL
// that means the same — plus what compare.ts needs to know to judge the
// two answers (ordered or not, which columns are approximate, which error
// spillway may raise in DuckDB's place).

import fc from 'fast-check'
import { col, count, first, frame as frames, last, lit, max, mean, min, nUnique, std, sum, var as variance, when, type Aggregate, type Expr, type Frame } from 'spillway'
import type { ColType } from './tables'
import { floatText, sqlString } from './tables'

// --- expressions -----------------------------------------------------------

/** Numeric expressions. int64 columns: rid, k, i; float64: x. */
export type NumE =
  | { e: 'col'; name: 'rid' | 'k' | 'i' | 'x' }
  | { e: 'int'; v: bigint }
  | { e: 'float'; v: number }
  | { e: 'arith'; op: 'plus' | 'minus' | 'multiplyBy' | 'divideBy'; l: NumE; r: NumE }
  | { e: 'toFloat'; x: NumE }
  | { e: 'fillNull'; x: NumE; v: NumE }
  | { e: 'dt'; part: 'year' | 'month' | 'day' | 'weekday' }
  | { e: 'len'; s: StrE }
  | { e: 'when'; c: BoolE; t: NumE; o: NumE }
  | { e: 'abs'; x: NumE }
  | { e: 'mod'; x: NumE; by: bigint }
  | { e: 'round'; x: NumE; d: number }

/** String expressions over s. */
export type StrE = { e: 's' } | { e: 'lower' | 'upper'; x: StrE } | { e: 'slice'; x: StrE; offset: number; length: number }

export type BoolE =
  | { e: 'cmp'; op: CmpOp; l: NumE; r: NumE }
  | { e: 'scmp'; op: CmpOp; l: StrE; r: string }
  | { e: 'dcmp'; op: CmpOp; v: string; form: 'iso' | 'date' | 'noon' }
  | { e: 'doff'; op: CmpOp; v: string; by: string; months: number; days: number }
  | { e: 'and' | 'or'; l: BoolE; r: BoolE }
  | { e: 'not'; x: BoolE }
  | { e: 'isNull' | 'isNotNull'; name: string }
  | { e: 'b' }
  | { e: 'startsWith' | 'contains' | 'endsWith' | 'like'; s: StrE; p: string }
  | { e: 'isIn'; x: NumE; vs: NumE[] }
  | { e: 'isBetween'; x: NumE; lo: NumE; hi: NumE }

export type CmpOp = 'eq' | 'neq' | 'gt' | 'gtEq' | 'lt' | 'ltEq'
const SQL_CMP: Record<CmpOp, string> = { eq: '=', neq: '<>', gt: '>', gtEq: '>=', lt: '<', ltEq: '<=' }
const SQL_ARITH = { plus: '+', minus: '-', multiplyBy: '*' } as const

const INT_COLS = new Set(['rid', 'k', 'i'])
export const isIntE = (e: NumE): boolean => {
  switch (e.e) {
    case 'col':
      return INT_COLS.has(e.name)
    case 'int':
    case 'dt':
    case 'len':
      return true
    case 'float':
    case 'toFloat':
      return false
    case 'arith':
      return e.op !== 'divideBy' && isIntE(e.l) && isIntE(e.r)
    case 'fillNull':
      return isIntE(e.x) && isIntE(e.v)
    case 'when':
      return isIntE(e.t) && isIntE(e.o)
    case 'abs':
    case 'mod':
    case 'round':
      return isIntE(e.x)
  }
}

export function numExpr(e: NumE): Expr {
  switch (e.e) {
    case 'col':
      return col(e.name)
    case 'int':
      return lit(e.v)
    case 'float':
      return lit(e.v)
    case 'arith':
      return numExpr(e.l)[e.op](numExpr(e.r))
    case 'toFloat':
      return numExpr(e.x).cast('float64')
    case 'fillNull':
      return numExpr(e.x).fillNull(numExpr(e.v))
    case 'dt':
      return col('d').dt[e.part]()
    case 'len':
      return strExpr(e.s).str.len()
    case 'when':
      return when(boolExpr(e.c)).then(numExpr(e.t)).otherwise(numExpr(e.o))
    case 'abs':
      return numExpr(e.x).abs()
    case 'mod':
      return numExpr(e.x).modulo(lit(e.by))
    case 'round':
      return numExpr(e.x).round(e.d)
  }
}

export function numSql(e: NumE): string {
  switch (e.e) {
    case 'col':
      return `"${e.name}"`
    case 'int':
      return `CAST('${e.v}' AS BIGINT)`
    case 'float':
      return `CAST('${floatText(e.v)}' AS DOUBLE)`
    case 'arith':
      // divideBy is float64 division (1 / 0 is Infinity with DuckDB's ieee_floating_point_ops).
      return e.op === 'divideBy' ? `(CAST(${numSql(e.l)} AS DOUBLE) / CAST(${numSql(e.r)} AS DOUBLE))` : `(${numSql(e.l)} ${SQL_ARITH[e.op]} ${numSql(e.r)})`
    case 'toFloat':
      return `CAST(${numSql(e.x)} AS DOUBLE)`
    case 'fillNull':
      return `COALESCE(${numSql(e.x)}, ${numSql(e.v)})`
    case 'dt':
      return `${e.part === 'weekday' ? 'isodow' : e.part}("d")`
    case 'len':
      return `length(${strSql(e.s)})`
    case 'when':
      return `(CASE WHEN ${boolSql(e.c)} THEN ${numSql(e.t)} ELSE ${numSql(e.o)} END)`
    case 'abs':
      return `abs(${numSql(e.x)})`
    case 'mod':
      return `(${numSql(e.x)} % CAST('${e.by}' AS BIGINT))`
    case 'round':
      // DuckDB 1.5 (the Node oracle) rounds NaN and ±Infinity to 0 at negative places; 2.0 and spillway keep them.
      return e.d < 0 ? `(CASE WHEN isfinite(${numSql(e.x)}) THEN round(${numSql(e.x)}, ${e.d}) ELSE ${numSql(e.x)} END)` : `round(${numSql(e.x)}, ${e.d})`
  }
}

export function strExpr(e: StrE): Expr {
  switch (e.e) {
    case 's':
      return col('s')
    case 'lower':
      return strExpr(e.x).str.lower()
    case 'upper':
      return strExpr(e.x).str.upper()
    case 'slice':
      return strExpr(e.x).str.slice(e.offset, e.length)
  }
}

export function strSql(e: StrE): string {
  switch (e.e) {
    case 's':
      return '"s"'
    case 'lower':
    case 'upper':
      return `${e.e}(${strSql(e.x)})`
    case 'slice':
      return `substring(${strSql(e.x)}, ${e.offset + 1}, ${e.length})`
  }
}

export function boolExpr(e: BoolE): Expr {
  switch (e.e) {
    case 'cmp':
      return numExpr(e.l)[e.op](numExpr(e.r))
    case 'scmp':
      return strExpr(e.l)[e.op](e.r)
    case 'dcmp':
      // An ISO string and a Date at midnight read as dates; a Date at noon compares the date as a timestamp (coerce.ts).
      return col('d')[e.op](e.form === 'iso' ? e.v : lit(new Date(`${e.v}T${e.form === 'noon' ? '12' : '00'}:00:00Z`)))
    case 'doff':
      return col('d').dt.offsetBy(e.by)[e.op](e.v)
    case 'and':
    case 'or':
      return boolExpr(e.l)[e.e](boolExpr(e.r))
    case 'not':
      return boolExpr(e.x).not()
    case 'isNull':
    case 'isNotNull':
      return col(e.name)[e.e]()
    case 'b':
      return col('b')
    case 'startsWith':
      return strExpr(e.s).str.startsWith(e.p)
    case 'contains':
      return strExpr(e.s).str.contains(e.p)
    case 'endsWith':
      return strExpr(e.s).str.endsWith(e.p)
    case 'like':
      return strExpr(e.s).str.like(e.p)
    case 'isIn':
      return numExpr(e.x).isIn(e.vs.map(numExpr))
    case 'isBetween':
      return numExpr(e.x).isBetween(numExpr(e.lo), numExpr(e.hi))
  }
}

export function boolSql(e: BoolE): string {
  switch (e.e) {
    case 'cmp':
      return `(${numSql(e.l)} ${SQL_CMP[e.op]} ${numSql(e.r)})`
    case 'scmp':
      return `(${strSql(e.l)} ${SQL_CMP[e.op]} ${sqlString(e.r)})`
    case 'doff':
      return `(CAST(("d" + INTERVAL (${e.months}) MONTH) + INTERVAL (${e.days}) DAY AS DATE) ${SQL_CMP[e.op]} DATE '${e.v}')`
    case 'dcmp':
      return e.form === 'noon' ? `(CAST("d" AS TIMESTAMP) ${SQL_CMP[e.op]} TIMESTAMP '${e.v} 12:00:00')` : `("d" ${SQL_CMP[e.op]} DATE '${e.v}')`
    case 'and':
    case 'or':
      return `(${boolSql(e.l)} ${e.e.toUpperCase()} ${boolSql(e.r)})`
    case 'not':
      return `(NOT ${boolSql(e.x)})`
    case 'isNull':
      return `("${e.name}" IS NULL)`
    case 'isNotNull':
      return `("${e.name}" IS NOT NULL)`
    case 'b':
      return '"b"'
    case 'startsWith':
      return `starts_with(${strSql(e.s)}, ${sqlString(e.p)})`
    case 'contains':
      return `contains(${strSql(e.s)}, ${sqlString(e.p)})`
    case 'endsWith':
      return `ends_with(${strSql(e.s)}, ${sqlString(e.p)})`
    case 'like':
      return `(${strSql(e.s)} LIKE ${sqlString(e.p)})`
    case 'isIn':
      return `(${numSql(e.x)} IN (${e.vs.map(numSql).join(', ')}))`
    case 'isBetween':
      return `(${numSql(e.x)} BETWEEN ${numSql(e.lo)} AND ${numSql(e.hi)})`
  }
}

// --- expression arbitraries --------------------------------------------------

const smallInt: fc.Arbitrary<NumE> = fc.bigInt(-3n, 3n).map((v) => ({ e: 'int', v }))
/** Float literals with a fraction: lit(2) is an int64, so an integral float would not be one. */
// 1e15 + 0.5: exact in float64, and parsed one ulp off before the core read its plan with serde_json's float_roundtrip.
const floatLit: fc.Arbitrary<NumE> = fc.constantFrom(0.5, -2.5, 1e-3, 1.5, 1e15 + 0.5).map((v) => ({ e: 'float', v }))
const numLeaf: fc.Arbitrary<NumE> = fc.oneof(
  { arbitrary: fc.constantFrom('rid', 'k', 'i', 'x').map((name) => ({ e: 'col', name }) as NumE), weight: 6 },
  { arbitrary: smallInt, weight: 2 },
  { arbitrary: floatLit, weight: 1 },
  { arbitrary: fc.constantFrom('year', 'month', 'day', 'weekday').map((part) => ({ e: 'dt', part }) as NumE), weight: 1 },
)

export const strE: fc.Arbitrary<StrE> = fc.oneof(
  { arbitrary: fc.constant({ e: 's' } as StrE), weight: 4 },
  { arbitrary: fc.constantFrom('lower', 'upper').map((e) => ({ e, x: { e: 's' } }) as StrE), weight: 1 },
  { arbitrary: fc.record({ offset: fc.integer({ min: 0, max: 2 }), length: fc.integer({ min: 0, max: 3 }) }).map(({ offset, length }) => ({ e: 'slice', x: { e: 's' }, offset, length }) as StrE), weight: 1 },
)

/**
 * Numeric expressions to `depth`. `safe`: integer arithmetic is cast to
 * float64 first, so no row can overflow — for filters, where DuckDB
 * evaluates AND / OR lazily and would skip an overflowing row spillway
 * evaluates (docs/frame-differential.md).
 */
export function numE(depth: number, safe: boolean): fc.Arbitrary<NumE> {
  if (depth <= 0) return numLeaf
  const sub = numE(depth - 1, safe)
  const safeSub = safe ? sub : numE(depth - 1, true)
  const floatOf = (x: NumE): NumE => (safe && isIntE(x) ? { e: 'toFloat', x } : x)
  return fc.oneof(
    { arbitrary: numLeaf, weight: 3 },
    {
      arbitrary: fc.record({ op: fc.constantFrom('plus', 'minus', 'multiplyBy', 'divideBy'), l: sub, r: sub }).map(({ op, l, r }) => ({ e: 'arith', op, l: floatOf(l), r: floatOf(r) }) as NumE),
      weight: 3,
    },
    { arbitrary: sub.map((x) => ({ e: 'toFloat', x }) as NumE), weight: 1 },
    { arbitrary: fc.tuple(sub, fc.oneof(smallInt, floatLit)).map(([x, v]) => ({ e: 'fillNull', x, v }) as NumE), weight: 1 },
    { arbitrary: strE.map((s) => ({ e: 'len', s }) as NumE), weight: 1 },
    // Branches that cannot overflow: spillway evaluates both over every row (as both sides of AND / OR), where DuckDB's CASE skips an overflow in the branch not taken (docs/frame-differential.md).
    { arbitrary: fc.record({ c: fc.constant({ e: 'b' } as BoolE), t: safeSub, o: safeSub }).map(({ c, t, o }) => ({ e: 'when', c, t, o }) as NumE), weight: 1 },
    { arbitrary: sub.map((x) => ({ e: 'abs', x: floatOf(x) }) as NumE), weight: 1 },
    // A literal divisor that is not zero (an integer % 0 fails on both sides) nor -1 (DuckDB 1.5 refuses the least int64 % -1, whose remainder is 0).
    { arbitrary: fc.tuple(sub, fc.constantFrom(3n, -7n, 1n, -2n, 1000n)).map(([x, by]) => ({ e: 'mod', x, by }) as NumE), weight: 1 },
    // An integer rounded to tens near int64's ends: DuckDB wraps it around (docs/frame-differential.md), spillway refuses it.
    { arbitrary: fc.tuple(sub, fc.integer({ min: -2, max: 3 })).map(([x, d]) => ({ e: 'round', x: d < 0 && isIntE(x) ? { e: 'toFloat', x } : x, d }) as NumE), weight: 1 },
  )
}

const cmpOp = fc.constantFrom<CmpOp>('eq', 'neq', 'gt', 'gtEq', 'lt', 'ltEq')
const strLit = fc.constantFrom('', 'a', 'A', 'é', 'ab', '🦆', 'z', 'a,b')
/** LIKE patterns: % and _ among literal characters, a regex metacharacter among them. */
const likePattern = fc.constantFrom('%', '', 'a%', '%a', '%b%', '_', 'a_', '_%', '%🦆', 'a.b', '%,%', 'A%')

export function boolE(depth: number): fc.Arbitrary<BoolE> {
  const leaf: fc.Arbitrary<BoolE> = fc.oneof(
    { arbitrary: fc.record({ op: cmpOp, l: numE(1, true), r: numE(1, true) }).map((x) => ({ e: 'cmp', ...x }) as BoolE), weight: 6 },
    { arbitrary: fc.record({ op: cmpOp, l: strE, r: strLit }).map((x) => ({ e: 'scmp', ...x }) as BoolE), weight: 2 },
    {
      arbitrary: fc.record({ op: cmpOp, v: fc.constantFrom('1969-12-31', '1970-01-01', '2000-02-29', '1600-02-29', '1850-06-15', '2100-12-31'), form: fc.constantFrom<'iso' | 'date' | 'noon'>('iso', 'date', 'noon') }).map((x) => ({ e: 'dcmp', ...x }) as BoolE),
      weight: 1,
    },
    {
      arbitrary: fc
        .record({
          op: cmpOp,
          v: fc.constantFrom('1970-01-31', '2000-02-29', '1600-03-31', '2100-12-31'),
          by: fc.constantFrom(['1mo', 1, 0], ['-1y2mo', -14, 0], ['2w3d', 0, 17], ['1q', 3, 0], ['-90d', 0, -90], ['1y1d', 12, 1]),
        })
        .map(({ op, v, by }) => ({ e: 'doff', op, v, by: by[0], months: by[1], days: by[2] }) as BoolE),
      weight: 1,
    },
    { arbitrary: fc.record({ e: fc.constantFrom('isNull', 'isNotNull'), name: fc.constantFrom('k', 'i', 'x', 's', 'b', 'd', 'm') }) as fc.Arbitrary<BoolE>, weight: 2 },
    { arbitrary: fc.constant({ e: 'b' } as BoolE), weight: 1 },
    { arbitrary: fc.record({ e: fc.constantFrom('startsWith', 'contains', 'endsWith'), s: strE, p: strLit }) as fc.Arbitrary<BoolE>, weight: 1 },
    { arbitrary: fc.record({ s: strE, p: likePattern }).map(({ s, p }) => ({ e: 'like', s, p }) as BoolE), weight: 1 },
    { arbitrary: fc.record({ x: numLeaf, vs: fc.array(fc.oneof(smallInt, floatLit), { minLength: 1, maxLength: 4 }) }).map(({ x, vs }) => ({ e: 'isIn', x, vs }) as BoolE), weight: 1 },
    { arbitrary: fc.record({ x: numLeaf, lo: smallInt, hi: fc.oneof(smallInt, floatLit) }).map(({ x, lo, hi }) => ({ e: 'isBetween', x, lo, hi }) as BoolE), weight: 1 },
  )
  if (depth <= 0) return leaf
  const sub = boolE(depth - 1)
  return fc.oneof(
    { arbitrary: leaf, weight: 3 },
    { arbitrary: fc.record({ e: fc.constantFrom('and', 'or'), l: sub, r: sub }) as fc.Arbitrary<BoolE>, weight: 2 },
    { arbitrary: sub.map((x) => ({ e: 'not', x }) as BoolE), weight: 1 },
  )
}

// --- queries ----------------------------------------------------------------

export type AggFunc = 'count' | 'sum' | 'mean' | 'min' | 'max' | 'nUnique' | 'first' | 'last' | 'std' | 'var'
export interface AggSpec {
  func: AggFunc
  /** undefined: count() of rows. */
  column?: string
}

/** groupBy().agg's and distinct's options: the tree or the shuffle, and the output partitions. */
export interface GroupOptions {
  method?: 'tree' | 'shuffle'
  splitOut?: number
}
const groupOptions: fc.Arbitrary<GroupOptions> = fc.record({ method: fc.constantFrom<'tree' | 'shuffle'>('tree', 'shuffle'), splitOut: fc.integer({ min: 1, max: 3 }) }, { requiredKeys: [] })

export type JoinHow = 'inner' | 'left' | 'right' | 'outer' | 'semi' | 'anti'

export type Query =
  | { q: 'filter'; pred: BoolE }
  | { q: 'project'; pred?: BoolE; exprs: NumE[]; strs: StrE[] }
  | { q: 'groupBy'; pred?: BoolE; keys: string[]; aggs: AggSpec[]; options?: GroupOptions }
  | { q: 'agg'; pred?: BoolE; aggs: AggSpec[] }
  | { q: 'scalar'; agg: AggSpec }
  | { q: 'join'; how: JoinHow; keys: string[]; renamed: boolean; npartitions?: number; pred?: BoolE }
  | { q: 'sort'; keys: string[]; descending: boolean[]; nullsLast: boolean; npartitions?: number; slice?: { from: 'head' | 'tail'; n: number } }
  | { q: 'distinct'; columns: string[]; options?: GroupOptions }
  | { q: 'roundtrip'; format: 'csv' | 'parquet'; pred?: BoolE; columns: string[] }

/** t's columns by type, as the aggregates and keys take them. */
export const T_TYPES: Record<string, ColType> = { rid: 'int64', k: 'int64', i: 'int64', x: 'float64', s: 'utf8', b: 'bool', d: 'date32', m: 'decimal' }
const NUMERIC = ['k', 'i', 'x', 'b', 'm']

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 2 })
const pred = maybe(boolE(2))
const subsetOf = (xs: string[], min = 1, max = xs.length) => fc.shuffledSubarray(xs, { minLength: min, maxLength: max })

const aggSpec: fc.Arbitrary<AggSpec> = fc.oneof(
  fc.constant({ func: 'count' as AggFunc }),
  fc.record({ func: fc.constant('count' as AggFunc), column: fc.constantFrom(...Object.keys(T_TYPES)) }),
  fc.record({ func: fc.constantFrom<AggFunc>('sum', 'mean', 'min', 'max'), column: fc.constantFrom(...NUMERIC) }),
  // std and var take numbers, not bools (the API refuses them).
  fc.record({ func: fc.constantFrom<AggFunc>('std', 'var'), column: fc.constantFrom('k', 'i', 'x', 'm') }),
  fc.record({ func: fc.constantFrom<AggFunc>('nUnique', 'first', 'last'), column: fc.constantFrom('k', 'i', 'x', 's', 'b', 'd', 'm') }),
)
const aggs = fc.array(aggSpec, { minLength: 1, maxLength: 4 })

/** The join keys (one or two of the columns t and u share; both sides' keys of one type). */
const joinKeys: fc.Arbitrary<string[]> = fc.oneof(fc.constantFrom<string[]>(['k'], ['s'], ['x'], ['d'], ['m']), fc.constantFrom<string[]>(['k', 's'], ['s', 'x'], ['d', 'k']))

export const query: fc.Arbitrary<Query> = fc.oneof(
  { arbitrary: fc.record({ q: fc.constant('filter' as const), pred: boolE(3) }), weight: 4 },
  {
    arbitrary: fc.record({ q: fc.constant('project' as const), pred, exprs: fc.array(numE(2, false), { minLength: 1, maxLength: 3 }), strs: fc.array(strE, { maxLength: 1 }) }, { requiredKeys: ['q', 'exprs', 'strs'] }),
    weight: 4,
  },
  { arbitrary: fc.record({ q: fc.constant('groupBy' as const), pred, keys: subsetOf(['k', 's', 'x', 'b', 'd', 'm'], 1, 2), aggs, options: maybe(groupOptions) }, { requiredKeys: ['q', 'keys', 'aggs'] }), weight: 5 },
  { arbitrary: fc.record({ q: fc.constant('agg' as const), pred, aggs }, { requiredKeys: ['q', 'aggs'] }), weight: 2 },
  { arbitrary: fc.record({ q: fc.constant('scalar' as const), agg: aggSpec.filter((a) => a.column === undefined || ['k', 'i', 'x'].includes(a.column) || (['first', 'last', 'nUnique', 'count'].includes(a.func) && a.column === 's')) }), weight: 1 },
  {
    arbitrary: fc.record(
      { q: fc.constant('join' as const), how: fc.constantFrom<JoinHow>('inner', 'left', 'right', 'outer', 'semi', 'anti'), keys: joinKeys, renamed: fc.boolean(), npartitions: maybe(fc.integer({ min: 1, max: 3 })), pred },
      { requiredKeys: ['q', 'how', 'keys', 'renamed'] },
    ),
    weight: 5,
  },
  {
    arbitrary: fc
      .record(
        {
          q: fc.constant('sort' as const),
          keys: subsetOf(['k', 'i', 'x', 's', 'b', 'd', 'm'], 1, 3),
          descending: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
          nullsLast: fc.boolean(),
          npartitions: maybe(fc.integer({ min: 1, max: 3 })),
          slice: maybe(fc.record({ from: fc.constantFrom<'head' | 'tail'>('head', 'tail'), n: fc.integer({ min: 0, max: 12 }) })),
        },
        { requiredKeys: ['q', 'keys', 'descending', 'nullsLast'] },
      )
      .map((s) => ({ ...s, descending: s.descending.slice(0, s.keys.length) })),
    weight: 5,
  },
  { arbitrary: fc.record({ q: fc.constant('distinct' as const), columns: subsetOf(['k', 'x', 's', 'b', 'd', 'm'], 1, 3), options: maybe(groupOptions) }, { requiredKeys: ['q', 'columns'] }), weight: 3 },
  {
    arbitrary: fc
      .record({ q: fc.constant('roundtrip' as const), format: fc.constantFrom<'csv' | 'parquet'>('csv', 'parquet'), pred, columns: subsetOf(Object.keys(T_TYPES), 1) }, { requiredKeys: ['q', 'format', 'columns'] })
      // readCsv's schema has no decimal type: a CSV round trip leaves m out (docs/frame-differential.md).
      .map((r) => ({ ...r, columns: r.format === 'csv' ? (r.columns.filter((c) => c !== 'm').length > 0 ? r.columns.filter((c) => c !== 'm') : ['rid']) : r.columns })),
    weight: 3,
  },
)

// --- building both sides ------------------------------------------------------

const AGG_FNS = { count, sum, mean, min, max, nUnique, first, last, std, var: variance } as const

export function aggregate(a: AggSpec): Aggregate {
  return a.func === 'count' ? count(a.column) : AGG_FNS[a.func](a.column!)
}
export const aggName = (a: AggSpec, n: number) => `a${n}_${a.func}${a.column ? `_${a.column}` : ''}`

/** What compare.ts needs besides the two answers. */
export interface Judge {
  /** Rows compared in order (else as a multiset, or by the keys). */
  ordered: boolean
  /** For group-bys: the key columns that identify a row. */
  keys?: string[]
  /** -0 and 0 one value (group keys, aggregates, distinct and join keys pick either). */
  looseZero: boolean
  /** CSV: an empty string reads back as null. */
  emptyIsNull?: boolean
  /** Approximate columns (float sums, means, std, var) and the DuckDB column holding each one's tolerance. */
  approx?: Record<string, { tol: string; squared?: boolean }>
  /** int64 sums: spillway may refuse one (ERR_SPILLWAY_FRAME) where DuckDB's column `bound` (the sum of |x|) passes int64. */
  intSums?: Record<string, string>
  /** DuckDB's columns only there for the judge (tolerances, bounds): not compared. */
  hidden?: string[]
  /** After DuckDB's rows are read: keep these (head / tail of the sorted rows). */
  slice?: { from: 'head' | 'tail'; n: number }
  /** A lazy scalar: spillway gives one JS value, not a table. */
  scalar?: boolean
}

const EPS = '2.220446049250313e-16'
const dbl = (c: string) => `CAST("${c}" AS DOUBLE)`

/** One aggregate in DuckDB's SQL, and the hidden columns the judge needs for it. */
function aggSql(a: AggSpec, name: string, judge: Judge): string[] {
  const c = a.column
  const tol = `__tol_${name}`
  const nonFinite = `bool_or(NOT isfinite(${dbl(c!)}))`
  switch (a.func) {
    case 'count':
      return [c === undefined ? `count(*) AS "${name}"` : `count("${c}") AS "${name}"`]
    case 'nUnique':
      return [`count(DISTINCT "${c}") AS "${name}"`]
    case 'first':
      return [`arg_min("${c}", "rid") FILTER (WHERE "${c}" IS NOT NULL) AS "${name}"`]
    case 'last':
      return [`arg_max("${c}", "rid") FILTER (WHERE "${c}" IS NOT NULL) AS "${name}"`]
    case 'min':
    case 'max': {
      // Spillway folds bools and decimals as numbers: bools as int64, decimals as float64.
      const arg = T_TYPES[c!] === 'bool' ? `CAST("${c}" AS BIGINT)` : T_TYPES[c!] === 'decimal' ? dbl(c!) : `"${c}"`
      return [`${a.func}(${arg}) AS "${name}"`]
    }
    case 'sum': {
      if (T_TYPES[c!] === 'int64' || T_TYPES[c!] === 'bool') {
        const bound = `__bound_${name}`
        judge.intSums![name] = bound
        judge.hidden!.push(bound)
        return [`sum(CAST("${c}" AS HUGEINT)) AS "${name}"`, `sum(abs(CAST("${c}" AS HUGEINT))) AS "${bound}"`]
      }
      judge.approx![name] = { tol }
      judge.hidden!.push(tol)
      return [`sum(${dbl(c!)}) AS "${name}"`, `8 * count("${c}") * ${EPS} * sum(abs(${dbl(c!)})) AS "${tol}"`]
    }
    case 'mean':
      judge.approx![name] = { tol }
      judge.hidden!.push(tol)
      return [`avg(${dbl(c!)}) AS "${name}"`, `8 * count("${c}") * ${EPS} * avg(abs(${dbl(c!)})) AS "${tol}"`]
    case 'std':
    case 'var': {
      // DuckDB raises "VARSAMP is out of range" over NaN or ±Infinity; spillway gives NaN (docs/frame-differential.md).
      judge.approx![name] = { tol, squared: a.func === 'std' }
      judge.hidden!.push(tol)
      const v = `CASE WHEN count("${c}") < 2 THEN NULL WHEN ${nonFinite} THEN 'NaN'::DOUBLE ELSE var_samp(${dbl(c!)}) FILTER (WHERE isfinite(${dbl(c!)})) END`
      const value = a.func === 'std' ? `sqrt(${v})` : v
      return [`${value} AS "${name}"`, `32 * count("${c}") * ${EPS} * avg(${dbl(c!)} * ${dbl(c!)}) AS "${tol}"`]
    }
  }
}

/** The columns of a join's output, as spillway names them (join.ts joinColumns), with each one's SQL. */
function joinSelect(q: Extract<Query, { q: 'join' }>, tCols: string[], uCols: string[]): string[] {
  const shared = !q.renamed
  const rightKey = (k: string) => (q.renamed ? `u_${k}` : k)
  const out: { name: string; sql: string }[] = []
  for (const c of tCols) {
    if (shared && q.keys.includes(c) && q.how !== 'semi' && q.how !== 'anti') out.push({ name: c, sql: q.how === 'right' || q.how === 'outer' ? `COALESCE(t."${c}", u."${c}")` : `t."${c}"` })
    else out.push({ name: c, sql: `t."${c}"` })
  }
  if (q.how !== 'semi' && q.how !== 'anti') {
    for (const c of uCols) {
      if (shared && q.keys.includes(c)) continue
      const own = q.renamed && q.keys.includes(c) ? rightKey(c) : c
      const name = out.some((x) => x.name === own) ? `${own}_right` : own
      out.push({ name, sql: `u."${c}"` })
    }
  }
  return out.map((x) => `${x.sql} AS "${x.name}"`)
}

export interface Built {
  /** The spillway side: computed by the runner (a Frame, a head/tail slice, or a lazy scalar). */
  spillway: (ctx: BuildContext) => unknown
  /** The DuckDB side: one SELECT over tables t and u. */
  sql: string
  judge: Judge
  /** Round trips: the spillway value is a write; the runner reads the files back with both engines. */
  roundtrip?: { format: 'csv' | 'parquet'; columns: string[] }
}

export interface BuildContext {
  t: Frame
  u: Frame
}

const where = (p?: BoolE) => (p ? ` WHERE ${boolSql(p)}` : '')
const filtered = (f: Frame, p?: BoolE) => (p ? f.filter(boolExpr(p)) : f)

export const T_COLS = Object.keys(T_TYPES)
export const U_COLS = ['rid', 'k', 's', 'x', 'd', 'm', 'v']

export function build(q: Query): Built {
  const judge: Judge = { ordered: false, looseZero: false, approx: {}, intSums: {}, hidden: [] }
  switch (q.q) {
    case 'filter':
      return { spillway: ({ t }) => t.filter(boolExpr(q.pred)), sql: `SELECT * FROM t${where(q.pred)} ORDER BY rid`, judge: { ...judge, ordered: true } }
    case 'project': {
      const exprs = q.exprs.map((e, n) => ({ name: `e${n}`, f: numExpr(e).alias(`e${n}`), sql: `${numSql(e)} AS "e${n}"` }))
      const strs = q.strs.map((e, n) => ({ name: `t${n}`, f: strExpr(e).alias(`t${n}`), sql: `${strSql(e)} AS "t${n}"` }))
      const all = [...exprs, ...strs]
      return {
        spillway: ({ t }) => filtered(t, q.pred).select('rid', ...all.map((x) => x.f)),
        sql: `SELECT "rid", ${all.map((x) => x.sql).join(', ')} FROM t${where(q.pred)} ORDER BY rid`,
        judge: { ...judge, ordered: true },
      }
    }
    case 'groupBy':
    case 'agg': {
      const named = q.aggs.map((a, n) => ({ name: aggName(a, n), a }))
      const sqls = named.flatMap(({ name, a }) => aggSql(a, name, judge))
      const keys = q.q === 'groupBy' ? q.keys : []
      const spillway = ({ t }: BuildContext) => {
        const f = filtered(t, q.pred)
        const aggregates = Object.fromEntries(named.map(({ name, a }) => [name, aggregate(a)]))
        return keys.length > 0 ? f.groupBy(...keys).agg(aggregates, q.q === 'groupBy' ? q.options : undefined) : f.agg(aggregates)
      }
      const sql = `SELECT ${[...keys.map((k) => `"${k}"`), ...sqls].join(', ')} FROM t${where(q.pred)}${keys.length > 0 ? ` GROUP BY ${keys.map((k) => `"${k}"`).join(', ')}` : ''}`
      return { spillway, sql, judge: { ...judge, keys, looseZero: true } }
    }
    case 'scalar': {
      const a = q.agg
      const sqls = aggSql(a, 'value', judge)
      const spillway = ({ t }: BuildContext) => (a.func === 'count' && a.column === undefined ? t.count() : a.func === 'count' ? t.agg({ value: count(a.column) }) : t[a.func](a.column!))
      return { spillway, sql: `SELECT ${sqls.join(', ')} FROM t`, judge: { ...judge, keys: [], looseZero: true, scalar: !(a.func === 'count' && a.column !== undefined) } }
    }
    case 'join': {
      const spillway = ({ t, u }: BuildContext) => {
        const options = { how: q.how, ...(q.npartitions ? { npartitions: q.npartitions } : {}) }
        if (!q.renamed) return filtered(t.join(u, { on: q.keys, ...options }), q.pred)
        const renamedU = u.rename(Object.fromEntries(q.keys.map((k) => [k, `u_${k}`])))
        // A filter of the output: the optimizer moves it into the side(s) it tests (plan/push-filters.ts).
        return filtered(t.join(renamedU, { leftOn: q.keys, rightOn: q.keys.map((k) => `u_${k}`), ...options }), q.pred)
      }
      const on = q.keys.map((k) => `t."${k}" = u."${k}"`).join(' AND ')
      const select = joinSelect(q, T_COLS, U_COLS).join(', ')
      let sql: string
      if (q.how === 'semi' || q.how === 'anti') sql = `SELECT ${select} FROM t WHERE ${q.how === 'anti' ? 'NOT ' : ''}EXISTS (SELECT 1 FROM u WHERE ${on})`
      else sql = `SELECT ${select} FROM t ${{ inner: 'INNER', left: 'LEFT', right: 'RIGHT', outer: 'FULL OUTER' }[q.how]} JOIN u ON ${on}`
      if (q.pred) sql = `SELECT * FROM (${sql})${where(q.pred)}`
      return { spillway, sql, judge: { ...judge, looseZero: true } }
    }
    case 'sort': {
      const order = q.keys.map((k, n) => `"${k}" ${q.descending[n] ? 'DESC' : 'ASC'} NULLS ${q.nullsLast ? 'LAST' : 'FIRST'}`)
      const spillway = ({ t }: BuildContext) => {
        const sorted = t.sortBy(q.keys, { descending: q.descending, nullsLast: q.nullsLast, ...(q.npartitions ? { npartitions: q.npartitions } : {}) })
        return q.slice ? sorted[q.slice.from](q.slice.n) : sorted
      }
      // spillway's sort is stable (ties keep their input order): rid, the input order, breaks DuckDB's ties.
      // DuckDB's ORDER BY gives a sorted -0.0 back as 0.0 (from its sort key), so the zeros' signs are not compared here.
      return { spillway, sql: `SELECT * FROM t ORDER BY ${[...order, '"rid"'].join(', ')}`, judge: { ...judge, ordered: true, looseZero: true, slice: q.slice } }
    }
    case 'distinct':
      return { spillway: ({ t }) => t.select(...q.columns).distinct(q.options), sql: `SELECT DISTINCT ${q.columns.map((c) => `"${c}"`).join(', ')} FROM t`, judge: { ...judge, looseZero: true } }
    case 'roundtrip':
      return {
        spillway: ({ t }) => filtered(t, q.pred).select(...q.columns),
        sql: `SELECT ${q.columns.map((c) => `"${c}"`).join(', ')} FROM t${where(q.pred)} ORDER BY rid`,
        judge: { ...judge, ordered: true, emptyIsNull: q.format === 'csv' },
        roundtrip: { format: q.format, columns: q.columns },
      }
  }
}

const showAgg = (a: AggSpec) => `${a.func === 'var' ? 'variance' : a.func}(${a.column === undefined ? '' : JSON.stringify(a.column)})`
const showPred = (p?: BoolE) => (p ? `.filter(${boolExpr(p).toString()})` : '')

/** The query as the spillway code a user would write, and its plain data (for a failure's report and a replay). */
export function showQuery(q: Query): string {
  let code: string
  switch (q.q) {
    case 'filter':
      code = `t${showPred(q.pred)}`
      break
    case 'project':
      code = `t${showPred(q.pred)}.select('rid', ${[...q.exprs.map((e, n) => numExpr(e).alias(`e${n}`)), ...q.strs.map((e, n) => strExpr(e).alias(`t${n}`))].map(String).join(', ')})`
      break
    case 'groupBy':
    case 'agg': {
      const a = `{ ${q.aggs.map((x, n) => `${aggName(x, n)}: ${showAgg(x)}`).join(', ')} }`
      const o = q.q === 'groupBy' && q.options ? `, ${JSON.stringify(q.options)}` : ''
      code = `t${showPred(q.pred)}${q.q === 'groupBy' ? `.groupBy(${q.keys.map((k) => JSON.stringify(k)).join(', ')})` : ''}.agg(${a}${o})`
      break
    }
    case 'scalar':
      code = `t.${q.agg.func}(${q.agg.column === undefined ? '' : JSON.stringify(q.agg.column)})`
      break
    case 'join':
      code = q.renamed
        ? `t.join(u.rename({ ${q.keys.map((k) => `${k}: 'u_${k}'`).join(', ')} }), { leftOn: ${JSON.stringify(q.keys)}, rightOn: ${JSON.stringify(q.keys.map((k) => `u_${k}`))}, how: '${q.how}'${q.npartitions ? `, npartitions: ${q.npartitions}` : ''} })`
        : `t.join(u, { on: ${JSON.stringify(q.keys)}, how: '${q.how}'${q.npartitions ? `, npartitions: ${q.npartitions}` : ''} })`
      code += showPred(q.pred)
      break
    case 'sort':
      code = `t.sortBy(${JSON.stringify(q.keys)}, { descending: ${JSON.stringify(q.descending)}, nullsLast: ${q.nullsLast}${q.npartitions ? `, npartitions: ${q.npartitions}` : ''} })${q.slice ? `.${q.slice.from}(${q.slice.n})` : ''}`
      break
    case 'distinct':
      code = `t.select(${q.columns.map((c) => JSON.stringify(c)).join(', ')}).distinct(${q.options ? JSON.stringify(q.options) : ''})`
      break
    case 'roundtrip':
      code = `t${showPred(q.pred)}.select(${q.columns.map((c) => JSON.stringify(c)).join(', ')}).to${q.format === 'csv' ? 'Csv' : 'Parquet'}(dir + '/part-*.${q.format}'), read back with frame.read${q.format === 'csv' ? 'Csv' : 'Parquet'} and DuckDB's read_${q.format}`
      break
  }
  const data = JSON.stringify(q, (_, v) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'number' && !Number.isFinite(v) ? String(v) : Object.is(v, -0) ? '-0' : v))
  return `${code}\n  as data: ${data}`
}

export { frames }
