// Frames through the package and real workers: CSV files read into Arrow
// batches by the core, filtered and grouped there, the result an
// apache-arrow Table, checked exactly against a plain-JS answer on the same
// rows.
import test from 'ava'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { col, count, frame, max, mean, min, sum, type Client, type FrameTable } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(async () => {
  rmSync(dir, { recursive: true, force: true })
})

interface Row {
  city: string | null
  year: number | null
  amount: number | null
  qty: number | null
}

/** Seeded rows: few cities so groups repeat, quoted fields with commas, nulls in every column. */
function rowsOf(seed: number, n: number): Row[] {
  let x = seed
  const next = (m: number) => {
    x = (x * 1103515245 + 12345) % 2 ** 31
    // The high bits: an LCG's low bits repeat with a short period.
    return Math.floor(x / 2 ** 12) % m
  }
  const cities = ['Oslo', 'Lima', 'Paris, TX', 'São "Paulo"']
  return Array.from({ length: n }, () => ({
    city: next(6) === 0 ? null : cities[next(4)],
    year: next(7) === 0 ? null : 2020 + next(3),
    // Quarters are exact in binary: sums and means match whatever the order.
    amount: next(5) === 0 ? null : next(400) / 4 - 20,
    qty: next(4) === 0 ? null : next(9),
  }))
}

/** A null number is written 'NA', a null city empty: both are in nullValues. */
const field = (v: string | number | null) => (v === null ? 'NA' : typeof v === 'string' ? `"${v.replace(/"/g, '""')}"` : String(v))

function writeCsv(path: string, rows: Row[], eol = '\n'): void {
  const lines = ['city,year,amount,qty', ...rows.map((r) => [r.city === null ? '' : field(r.city), field(r.year), field(r.amount), field(r.qty)].join(','))]
  writeFileSync(path, lines.join(eol) + eol)
}

/** The files: one with CRLF, one with a header only (an empty partition), small blocks so files split. */
function makeFiles(sub: string): Row[] {
  mkdirSync(join(dir, sub))
  const a = rowsOf(1, 700)
  const b = rowsOf(2, 500)
  const c = rowsOf(3, 300)
  writeCsv(join(dir, sub, 'a.csv'), a)
  writeCsv(join(dir, sub, 'b.csv'), b, '\r\n')
  writeCsv(join(dir, sub, 'c.csv'), [])
  writeCsv(join(dir, sub, 'd.csv'), c)
  return [...a, ...b, ...c]
}

type Groups = Map<string, { n: number; q: number; total: number | null; sumAmount: number; nAmount: number; lo: number | null; hi: number | null }>

function plainGroups(rows: Row[]): Record<string, unknown>[] {
  const groups: Groups = new Map()
  for (const r of rows.filter((r) => r.qty === null || r.qty > 2)) {
    const k = JSON.stringify([r.city, r.year])
    const g = groups.get(k) ?? { n: 0, q: 0, total: null, sumAmount: 0, nAmount: 0, lo: null, hi: null }
    g.n++
    if (r.qty !== null) (g.q++, (g.total = (g.total ?? 0) + r.qty), (g.hi = Math.max(g.hi ?? -Infinity, r.qty)))
    if (r.amount !== null) (g.sumAmount += r.amount, g.nAmount++, (g.lo = Math.min(g.lo ?? Infinity, r.amount)))
    groups.set(k, g)
  }
  return [...groups].map(([k, g]) => {
    const [city, year] = JSON.parse(k)
    return { city, year, n: g.n, q: g.q, total: g.total, avg: g.nAmount ? g.sumAmount / g.nAmount : null, lo: g.lo, hi: g.hi }
  })
}

/** A Table's rows as plain objects, int64 as numbers, in one order. */
function rowsOfTable(t: FrameTable): Record<string, unknown>[] {
  const out = t.toArray().map((r) => Object.fromEntries(Object.entries(r.toJSON()).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])))
  return sortRows(out)
}

const sortRows = (rows: Record<string, unknown>[]) => rows.sort((a, b) => (JSON.stringify([a.city, a.year]) < JSON.stringify([b.city, b.year]) ? -1 : 1))

test.serial('readCsv → filter → groupBy.agg → compute: exact against plain JS, nulls, quotes, CRLF and an empty file included', async (t) => {
  const rows = makeFiles('sales')
  const f = frame.readCsv(join(dir, 'sales', '*.csv'), { blocksize: 4000, nullValues: ['', 'NA'] })
  t.deepEqual(f.schema, { city: 'utf8', year: 'int64', amount: 'float64', qty: 'int64' })
  t.true(f.npartitions > 5, `${f.npartitions} partitions`)
  const grouped = f
    .filter(col('qty').gt(2).or(col('qty').isNull()))
    .groupBy('city', 'year')
    .agg({ n: count(), q: count('qty'), total: sum('qty'), avg: mean('amount'), lo: min('amount'), hi: max('qty') })
  t.deepEqual(grouped.schema, { city: 'utf8', year: 'int64', n: 'int64', q: 'int64', total: 'int64', avg: 'float64', lo: 'float64', hi: 'int64' })
  const expected = sortRows(plainGroups(rows))
  const table = await client.compute(grouped)
  t.deepEqual(rowsOfTable(table), expected)

  // splitOut: each group in exactly one of three output partitions, the same answer.
  const split = f.filter(col('qty').gt(2).or(col('qty').isNull())).groupBy(['city', 'year']).agg({ n: count(), q: count('qty'), total: sum('qty'), avg: mean('amount'), lo: min('amount'), hi: max('qty') }, { splitOut: 3, splitEvery: 2 })
  t.is(split.npartitions, 3)
  t.deepEqual(rowsOfTable(await client.compute(split)), expected)
})

test.serial('filter and select compute to a Table of the rows kept, schema known before', async (t) => {
  mkdirSync(join(dir, 'small'))
  const rows = rowsOf(9, 200)
  writeCsv(join(dir, 'small', 's.csv'), rows)
  const f = frame
    .readCsv(join(dir, 'small', 's.csv'), { blocksize: 1500, nullValues: ['', 'NA'] })
    .filter(col('city').eq('Oslo').and(col('amount').gtEq(0)))
    .select('year', col('amount').lt(40.5).alias('cheap'))
  t.deepEqual(f.schema, { year: 'int64', cheap: 'bool' })
  const table = await client.compute(f)
  const want = rows.filter((r) => r.city === 'Oslo' && r.amount !== null && r.amount >= 0).map((r) => ({ year: r.year, cheap: r.amount! < 40.5 }))
  t.deepEqual(
    table.toArray().map((r) => ({ year: r.year === null ? null : Number(r.year), cheap: r.cheap })),
    want,
  )
})

test.serial('unknown columns are errors when the frame is built, naming the column and listing those there are', (t) => {
  mkdirSync(join(dir, 'schema'))
  writeCsv(join(dir, 'schema', 's.csv'), rowsOf(4, 20))
  const f = frame.readCsv(join(dir, 'schema', 's.csv'), { nullValues: ['', 'NA'] })
  const listed = '"city", "year", "amount", "qty"'
  for (const build of [() => f.filter(col('price').gt(1)), () => f.groupBy('town'), () => f.groupBy('city').agg({ s: sum('cost') }), () => f.select('city', 'zip')]) {
    const e = t.throws(build, { code: 'ERR_SPILLWAY_COLUMN_NOT_FOUND' })
    t.true(e!.message.includes(listed), e!.message)
  }
  t.throws(() => f.filter(col('prce').gt(1)), { message: /no column "prce"/ })
  t.throws(() => f.groupBy('city').agg({ s: sum('city') }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /sum\("city"\)[\s\S]*utf8[\s\S]*numeric/ })
  t.throws(() => f.filter(col('city').gt(3)), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /utf8 and int64/ })
  t.throws(() => frame.readCsv(join(dir, 'schema', 's.csv'), { schema: { cty: 'utf8' } }), { code: 'ERR_SPILLWAY_COLUMN_NOT_FOUND', message: /"cty"[\s\S]*"city", "year"/ })
})

test.serial('a value that does not fit its inferred type fails the compute with a coded error naming file and column', async (t) => {
  mkdirSync(join(dir, 'bad'))
  const path = join(dir, 'bad', 'late.csv')
  const lines = ['id,v', ...Array.from({ length: 400 }, (_, i) => `${i},${i}`), '400,oops']
  writeFileSync(path, lines.join('\n') + '\n')
  const f = frame.readCsv(path, { sampleBytes: 200 })
  t.deepEqual(f.schema, { id: 'int64', v: 'int64' })
  const e = await t.throwsAsync(client.compute(f), { code: 'ERR_SPILLWAY_READ' })
  t.true(e!.message.includes(path) && e!.message.includes('"v"') && e!.message.includes('oops'), e!.message)
  // With the type given, the file reads.
  const table = await client.compute(frame.readCsv(path, { sampleBytes: 200, schema: { v: 'utf8' } }))
  t.is(table.numRows, 401)
})
