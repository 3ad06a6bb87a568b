// The differential suite's judge: both engines' answers as rows of typed
// cells, normalised where spillway and DuckDB differ by design (each such
// difference is listed in docs/frame-differential.md), then compared — in
// order where the query sorts, by group key for group-bys, else as
// multisets; float sums, means, std and var within a tolerance DuckDB
// computes from the group's own values.

import type { Table } from 'apache-arrow'
import type { DuckDBResultReader } from '@duckdb/node-api'
import { floatText, isoDate, MAX64, MIN64 } from './tables'
import type { Judge } from './queries'

export type Cell =
  | null
  | { t: 'i'; v: bigint }
  | { t: 'f'; v: number }
  | { t: 's'; v: string }
  | { t: 'b'; v: boolean }
  | { t: 'd'; v: number }
  | { t: 'm'; v: bigint; scale: number }

export interface Result {
  columns: string[]
  /** Each column's type as the engine names it (for the report). */
  types: string[]
  rows: Cell[][]
}

export type Outcome = { ok: true; result: Result } | { ok: false; code?: string; message: string }

const MS_PER_DAY = 86_400_000

/** A spillway result (an apache-arrow Table) as cells. */
export function fromArrow(table: Table): Result {
  const fields = table.schema.fields
  const columns = fields.map((f) => f.name)
  const types = fields.map((f) => String(f.type))
  const rows: Cell[][] = Array.from({ length: table.numRows }, () => [])
  fields.forEach((f, j) => {
    const v = table.getChild(f.name)!
    const type = String(f.type)
    for (let r = 0; r < table.numRows; r++) rows[r][j] = arrowCell(type, v.isValid(r) ? v.get(r) : null)
  })
  return { columns, types, rows }
}

function arrowCell(type: string, x: unknown): Cell {
  if (x === null || x === undefined) return null
  if (/^U?Int/.test(type)) return { t: 'i', v: BigInt(x as number | bigint) }
  if (/^Float/.test(type)) return { t: 'f', v: x as number }
  if (/Utf8/.test(type)) return { t: 's', v: x as string }
  if (type === 'Bool') return { t: 'b', v: x as boolean }
  if (/^Date/.test(type)) return { t: 'd', v: Math.round((x instanceof Date ? x.getTime() : (x as number)) / MS_PER_DAY) }
  const dec = /^Decimal\[\d+e([+-]\d+)\]$/.exec(type)
  if (dec) return { t: 'm', v: BigInt(String(x)), scale: Number(dec[1]) }
  throw new Error(`the differential suite reads no ${type} column yet`)
}

/** DuckDB's rows as cells. */
export function fromDuck(reader: DuckDBResultReader): Result {
  const columns = reader.columnNames()
  const types = reader.columnTypes().map(String)
  const rows = reader.getRows().map((r) => r.map((x, j) => duckCell(types[j], x)))
  return { columns, types, rows }
}

function duckCell(type: string, x: unknown): Cell {
  if (x === null || x === undefined) return null
  if (/^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|U?BIGINT|HUGEINT|UHUGEINT)$/.test(type)) return { t: 'i', v: BigInt(x as number | bigint) }
  if (type === 'DOUBLE' || type === 'FLOAT') return { t: 'f', v: x as number }
  if (type === 'VARCHAR') return { t: 's', v: x as string }
  if (type === 'BOOLEAN') return { t: 'b', v: x as boolean }
  if (type === 'DATE') return { t: 'd', v: (x as { days: number }).days }
  if (type.startsWith('DECIMAL')) return { t: 'm', v: (x as { value: bigint }).value, scale: (x as { scale: number }).scale }
  throw new Error(`the differential suite reads no DuckDB ${type} column yet`)
}

/** A lazy scalar's value (a number — int64 too —, a string, a boolean or null) as a one-row result. */
export function fromScalar(x: unknown): Result {
  const cell: Cell = x === null || x === undefined ? null : typeof x === 'number' ? { t: 'f', v: x } : typeof x === 'string' ? { t: 's', v: x } : typeof x === 'boolean' ? { t: 'b', v: x } : { t: 's', v: `(a ${typeof x}) ${String(x)}` }
  return { columns: ['value'], types: ['scalar'], rows: [[cell]] }
}

// --- normalising and comparing -----------------------------------------------

export function cellKey(c: Cell, looseZero: boolean): string {
  if (c === null) return 'null'
  switch (c.t) {
    case 'f':
      return `f:${Number.isNaN(c.v) ? 'NaN' : looseZero && c.v === 0 ? '0' : floatText(c.v)}`
    case 'm':
      return `m:${c.v}e-${c.scale}`
    case 's':
      return `s:${JSON.stringify(c.v)}`
    default:
      return `${c.t}:${c.v}`
  }
}

export function showCell(c: Cell): string {
  if (c === null) return 'null'
  switch (c.t) {
    case 'i':
      return `${c.v}n`
    case 'f':
      return floatText(c.v)
    case 's':
      return JSON.stringify(c.v)
    case 'b':
      return String(c.v)
    case 'd':
      return isoDate(c.v)
    case 'm': {
      const s = (c.v < 0n ? -c.v : c.v).toString().padStart(c.scale + 1, '0')
      return `${c.v < 0n ? '-' : ''}${c.scale > 0 ? `${s.slice(0, -c.scale)}.${s.slice(-c.scale)}` : s}`
    }
  }
}

export function showResult(r: Result, limit = 45): string {
  const head = `  columns: ${r.columns.map((c, j) => `${c} ${r.types[j]}`).join(', ')}; ${r.rows.length} rows`
  const rows = r.rows.slice(0, limit).map((row) => `  [${row.map(showCell).join(', ')}]`)
  return [head, ...rows, ...(r.rows.length > limit ? [`  … ${r.rows.length - limit} more`] : [])].join('\n')
}

export function showOutcome(o: Outcome): string {
  return o.ok ? showResult(o.result) : `  error${o.code ? ` ${o.code}` : ''}: ${o.message.split('\n')[0].slice(0, 400)}`
}

const floatOf = (c: Cell): number | null => (c === null ? null : c.t === 'f' ? c.v : c.t === 'i' || c.t === 'm' ? Number(c.v) / (c.t === 'm' ? 10 ** c.scale : 1) : NaN)

/** Approximately equal: both null, both the same non-finite value, or within `tol` (of the squares, for std). */
function approxEqual(a: Cell, b: Cell, tol: number, squared: boolean): boolean {
  const x = floatOf(a)
  const y = floatOf(b)
  if (x === null || y === null) return x === y
  if (!Number.isFinite(x) || !Number.isFinite(y)) return Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y))
  const [p, q] = squared ? [x * x, y * y] : [x, y]
  return Math.abs(p - q) <= (Number.isFinite(tol) ? tol : Infinity)
}

/**
 * Undefined where the two answers agree under `judge`, else why not. The
 * DuckDB side is the reference: its hidden columns (tolerances, bounds) are
 * read here and dropped before the comparison.
 */
export function judgeOutcomes(spill: Outcome, duck: Outcome, judge: Judge): string | undefined {
  if (!spill.ok && !duck.ok) return undefined // both refuse (an int64 overflow, say)
  if (!duck.ok) return 'DuckDB refused the query and spillway answered'
  const hidden = new Set(judge.hidden ?? [])
  const dIdx = duck.result.columns.map((c, j) => [c, j] as const).filter(([c]) => !hidden.has(c))
  const colOf = (name: string) => duck.result.columns.indexOf(name)
  let dRows = duck.result.rows
  if (judge.slice) dRows = judge.slice.from === 'head' ? dRows.slice(0, judge.slice.n) : dRows.slice(Math.max(0, dRows.length - judge.slice.n))
  if (!spill.ok) {
    // An int64 sum: spillway's running total is checked (ERR_SPILLWAY_FRAME), DuckDB sums in int128.
    const mayOverflow = Object.values(judge.intSums ?? {}).some((bound) => dRows.some((r) => { const c = r[colOf(bound)]; return c !== null && c.t === 'i' && c.v > MAX64 }))
    if (mayOverflow && spill.code === 'ERR_SPILLWAY_FRAME' && /sums integers past int64's range/.test(spill.message)) return undefined
    return 'spillway refused the query and DuckDB answered'
  }
  const s = spill.result
  const names = dIdx.map(([c]) => c)
  if (judge.scalar) {
    if (s.rows.length !== 1 || dRows.length !== 1) return `a scalar: ${s.rows.length} and ${dRows.length} rows`
  } else if (s.columns.join('\u0000') !== names.join('\u0000')) return `columns differ: spillway [${s.columns.join(', ')}], DuckDB [${names.join(', ')}]`

  const norm = (c: Cell): Cell => {
    if (judge.emptyIsNull && c !== null && c.t === 's' && c.v === '') return null
    // A lazy scalar is a JS number, int64 too.
    if (judge.scalar && c !== null && c.t === 'i') return { t: 'f', v: Number(c.v) }
    return c
  }
  const sRows = s.rows.map((r) => r.map(norm))
  const expect = dRows.map((r) => ({ cells: dIdx.map(([, j]) => norm(r[j])), row: r }))
  const key = (cells: Cell[]) => cells.map((c) => cellKey(c, judge.looseZero)).join('|')

  // A DuckDB int128 sum past int64 must not come out of spillway as a value.
  for (const [name] of Object.entries(judge.intSums ?? {})) {
    const j = colOf(name)
    if (expect.some((e) => { const c = e.row[j]; return c !== null && c.t === 'i' && (c.v > MAX64 || c.v < MIN64) })) return `the sum ${name} passes int64's range in DuckDB and spillway gave a value`
  }

  const cellsAgree = (a: Cell, b: Cell, column: string, row: Cell[]): boolean => {
    const approx = judge.approx?.[column]
    if (approx) {
      const tolCell = row[colOf(approx.tol)]
      return approxEqual(a, b, tolCell === null ? 0 : (floatOf(tolCell) as number), approx.squared ?? false)
    }
    return cellKey(a, judge.looseZero) === cellKey(b, judge.looseZero)
  }
  const rowsAgree = (a: Cell[], e: { cells: Cell[]; row: Cell[] }) => a.length === e.cells.length && a.every((c, j) => cellsAgree(c, e.cells[j], names[j], e.row))

  if (sRows.length !== expect.length) return `row counts differ: spillway ${sRows.length}, DuckDB ${expect.length}`
  if (judge.ordered) {
    const bad = sRows.findIndex((r, n) => !rowsAgree(r, expect[n]))
    return bad < 0 ? undefined : `row ${bad} differs (in order): spillway [${sRows[bad].map(showCell).join(', ')}], DuckDB [${expect[bad].cells.map(showCell).join(', ')}]`
  }
  if (judge.keys) {
    const k = judge.keys.length
    const byKey = new Map<string, { cells: Cell[]; row: Cell[] }>()
    for (const e of expect) byKey.set(key(e.cells.slice(0, k)), e)
    const seen = new Set<string>()
    for (const r of sRows) {
      const kk = key(r.slice(0, k))
      const e = byKey.get(kk)
      if (!e) return `spillway has a group DuckDB does not: [${r.slice(0, k).map(showCell).join(', ')}]`
      if (seen.has(kk)) return `spillway has the group [${r.slice(0, k).map(showCell).join(', ')}] twice`
      seen.add(kk)
      if (!rowsAgree(r, e)) return `the group [${r.slice(0, k).map(showCell).join(', ')}] differs: spillway [${r.map(showCell).join(', ')}], DuckDB [${e.cells.map(showCell).join(', ')}]`
    }
    return undefined
  }
  const a = sRows.map(key).sort()
  const b = expect.map((e) => key(e.cells)).sort()
  const missing = b.filter((x) => !a.includes(x))
  const extra = a.filter((x) => !b.includes(x))
  if (missing.length === 0 && extra.length === 0 && a.every((x, n) => x === b[n])) return undefined
  return `the rows differ (as multisets): only DuckDB has ${missing.length ? missing.slice(0, 5).join(' ; ') : '(none; counts differ)'}; only spillway has ${extra.length ? extra.slice(0, 5).join(' ; ') : '(none)'}`
}
