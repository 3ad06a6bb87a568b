// The optimized plan gives the answer of the frame as written, through the
// package and real workers: joins filtered after the fact, projections
// chosen after a join, a sort's head, a lazy count, a write and iterate,
// each computed both ways ({ optimize: false } runs each method as written)
// and against DuckDB's SQL over the same Parquet files.
import test from 'ava'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import { col, count, frame, sum, type Client, type Frame, type FrameTable } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-plan-'))
const orders = join(dir, 'orders.parquet')
const items = join(dir, 'items.parquet')
let client!: Client
let duck!: DuckDBConnection
sharedCluster(test, (c) => (client = c))
test.before(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect()
  // Row groups of 4096 rows: several partitions per file with a small blocksize, and statistics to prune by.
  await duck.run(`COPY (SELECT i AS id, i % 7 AS cust, DATE '2024-01-01' + (i % 365)::INTEGER AS day, CASE WHEN i % 11 = 0 THEN NULL ELSE 'note ' || (i % 50) END AS note FROM range(20000) t(i)) TO '${orders}' (FORMAT parquet, ROW_GROUP_SIZE 4096)`)
  await duck.run(`COPY (SELECT i % 20000 AS id, i AS line, i % 13 AS qty, ((i % 5) * 0.5)::DOUBLE AS price FROM range(60000) t(i)) TO '${items}' (FORMAT parquet, ROW_GROUP_SIZE 4096)`)
})
test.after.always(() => {
  duck?.closeSync()
  rmSync(dir, { recursive: true, force: true })
})

const small = { blocksize: 64 * 1024 }
const o = () => frame.readParquet(orders, small)
const i = () => frame.readParquet(items, small)

/** Rows as sorted JSON lines (bigints and dates as numbers), so orders that differ compare equal. */
function lines(t: FrameTable | Record<string, unknown>[], ordered = false): string[] {
  const rows = Array.isArray(t) ? t : t.toArray().map((r) => r.toJSON())
  const out = rows.map((r) => JSON.stringify(r, (_, v) => (typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.getTime() : v)))
  return ordered ? out : out.sort()
}

async function sql(q: string): Promise<Record<string, unknown>[]> {
  const r = await duck.runAndReadAll(q)
  return r.getRowObjectsJS().map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])))
}

async function bothWays(t: { deepEqual: (a: unknown, b: unknown, m?: string) => void }, f: Frame, ordered = false): Promise<string[]> {
  const [as, opt] = [await client.compute(f, { optimize: false }), await client.compute(f)]
  t.deepEqual(lines(opt, ordered), lines(as, ordered), 'optimized as written')
  return lines(opt, ordered)
}

test('a filter after a join and a projection after it: the answer as written and as DuckDB gives it', async (t) => {
  const q = o()
    .join(i(), { on: 'id' })
    .filter(col('qty').gt(9).and(col('cust').eq(3)).and(col('note').isNotNull()))
    .groupBy('note')
    .agg({ n: count(), q: sum('qty'), p: sum(col('price').multiplyBy(col('qty'))) })
  t.regex(q.explain(), /filter[^\n]*\n\s+read-parquet [^\n]*items\.parquet: columns \[id, qty, price\]/)
  const got = await bothWays(t, q)
  const want = await sql(`SELECT note, count(*) AS n, sum(qty) AS q, sum(price * qty) AS p FROM '${orders}' JOIN '${items}' USING (id) WHERE qty > 9 AND cust = 3 AND note IS NOT NULL GROUP BY note`)
  t.deepEqual(got, lines(want))
  t.true(got.length > 10)
})

test('left, semi and anti joins filtered after, a sort\'s head, a lazy count, iterate and a write: as written', async (t) => {
  for (const how of ['left', 'semi', 'anti'] as const) {
    const q = o().join(i().filter(col('qty').eq(0)), { on: 'id', how }).filter(col('cust').lt(2)).select('id', 'note')
    await bothWays(t, q)
  }
  const top = o().join(i(), { on: 'id' }).select('line', 'price', 'day').filter(col('day').gtEq('2024-06-01')).sortBy(['price', 'line'], { descending: true })
  const [as, opt] = [await client.compute(top.head(7), { optimize: false }), await client.compute(top.head(7))]
  t.deepEqual(lines(opt, true), lines(as, true))
  t.is(opt.numRows, 7)
  const counted = o().filter(col('note').eq('note 7')).count()
  t.is(await client.compute(counted), (await sql(`SELECT count(*) AS n FROM '${orders}' WHERE note = 'note 7'`))[0].n as number)
  const rows: string[] = []
  for await (const b of client.iterate(o().join(i(), { on: 'id' }).filter(col('line').lt(5)).select('line', 'cust'))) rows.push(...lines(b.toArray().map((r) => r.toJSON())))
  t.deepEqual(rows.sort(), lines(await sql(`SELECT line, cust FROM '${orders}' JOIN '${items}' USING (id) WHERE line < 5`)))
  const paths = await client.compute(o().filter(col('cust').eq(6)).select('id').toParquet(join(dir, 'out-*.parquet')))
  t.deepEqual(lines(await client.compute(frame.readParquet(paths))), lines(await sql(`SELECT id FROM '${orders}' WHERE cust = 6`)))
})
