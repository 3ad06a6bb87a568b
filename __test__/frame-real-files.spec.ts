// Frames over files that pyarrow, DuckDB, Polars and pandas wrote (committed
// under fixtures/real-files, made by make.py there), each answer checked
// against DuckDB's on the same file (printed by make.py, held here): the
// types those writers choose that frames once got wrong or refused.
import test from 'ava'
import { join } from 'node:path'
import { col, count, frame, max, min, sum, type Client, type FrameTable } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = join(__dirname, 'fixtures', 'real-files')
const at = (name: string) => join(dir, name)
let client!: Client
sharedCluster(test, (c) => (client = c))

const byKey = (t: FrameTable, key: string) => Object.fromEntries(t.toArray().map((r) => [String(r[key]), r.toJSON()]))
const near = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b))

test("pyarrow's uint64 past int64 is a coded error naming the aggregate, never a skipped null; values that fit sum exactly", async (t) => {
  const f = frame.readParquet(at('pyarrow-uint64-map.parquet'))
  t.is(Number(await client.compute(f.sum('small'))), 190) // DuckDB: sum(small) = 190
  for (const agg of [sum('h'), min('h'), max('h')]) {
    const e = await t.throwsAsync(client.compute(f.agg({ t: agg })), { code: 'ERR_SPILLWAY_FRAME' })
    t.true(e!.message.includes('the aggregate "t": the uint64 value 9223372036854775808 (row 0 of the partition) does not fit int64'), e!.message)
    t.true(e!.message.includes("cast to float64 first (e.g. col(...).cast('float64'))"), e!.message)
  }
  // What the message says to do works.
  const approx = await client.compute(f.select(col('h').cast('float64').alias('h')).agg({ t: sum('h') }))
  t.true(near(approx.get(0)!.t, 20 * 2 ** 63 + 190))
  // Grouping and counting never cast: 20 distinct keys.
  t.is((await client.compute(f.groupBy('h').agg({ n: count() }))).numRows, 20)
})

test('a Parquet map column reads as a list of key/value structs (DuckDB: sum(m[k]) = 160, count(m) = 16)', async (t) => {
  const f = frame.readParquet(at('pyarrow-uint64-map.parquet'), { columns: ['id', 'm'] })
  t.is(f.fields.find((c) => c.name === 'm')!.type, 'list<struct<"key": utf8, "value": int32>>')
  const table = await client.compute(f)
  const m = table.getChild('m')!
  t.is(m.length - m.nullCount, 16)
  let k = 0
  for (const entries of m.toArray()) for (const e of entries?.toArray() ?? []) if (e.key === 'k') k += e.value
  t.is(k, 160)
  const exploded = await client.compute(f.select(col('m').explode().alias('kv')).count())
  t.is(Number(exploded), 16 * 2 + 4) // an empty or null list explodes to one null row, as Polars does
})

test("DuckDB's decimals aggregate as float64, its UUID groups as fixed_size_binary[16], its INTERVAL is a coded error naming file, column and what to do", async (t) => {
  const path = at('duckdb-decimal-uuid-interval.parquet')
  const e = t.throws(() => frame.readParquet(path), { code: 'ERR_SPILLWAY_READ' })
  t.true(e!.message.includes(path) && e!.message.includes('column "iv"') && e!.message.includes('Interval'), e!.message)
  t.true(e!.message.includes('Leave the column out with `columns`'), e!.message)
  const f = frame.readParquet(path, { columns: ['id', 'g', 'x', 'd38', 'u', 'e'] })
  t.deepEqual(f.fields.map((c) => c.type), ['int64', 'utf8', 'decimal128(21, 1)', 'decimal128(38, 10)', 'fixed_size_binary[16]', 'utf8'])
  const got = byKey(await client.compute(f.groupBy('g').agg({ x: sum('x'), d: sum('d38'), lo: min('x'), u: count('u') })), 'g')
  // DuckDB: g, sum(x), sum(d38), min(x), count(DISTINCT u)
  for (const [g, x, d, lo, u] of [['0', 94.5, 21.0, 0.0, 7], ['1', 105.0, 23.3333333331, 1.5, 7], ['2', 85.5, 19.0000000002, 3.0, 6]] as const) {
    t.true(near(got[g].x, x) && near(got[g].d, d) && got[g].lo === lo && Number(got[g].u) === u, `${g}: ${JSON.stringify(got[g], (_, v) => (typeof v === 'bigint' ? Number(v) : v))}`)
  }
  t.is(Number(await client.compute(f.nUnique('u'))), 20)
})

test("pyarrow's INT96 timestamps and string views, and Polars' defaults (string views, categorical, decimal) read as DuckDB reads them", async (t) => {
  const ts = await client.compute(frame.readParquet(at('pyarrow-int96-view.parquet')).sortBy('id'))
  const v = ts.getChild('ts')!
  // DuckDB: epoch_us(min(ts)), epoch_us(max(ts)) = 1767268800000000, 1767269503000019 (INT96 is nanoseconds)
  const raw = v.data.flatMap((d) => [...(d.values as BigInt64Array)])
  const scale = { 0: 1_000_000n, 1: 1_000n, 2: 1n, 3: 1n }[v.type.unit as 0 | 1 | 2 | 3]
  const us = raw.map((x) => (v.type.unit === 3 ? x / 1000n : x * scale))
  t.deepEqual([us[0], us[us.length - 1]], [1767268800000000n, 1767269503000019n])
  t.is(ts.getChild('s')!.get(0), 'view-0')
  const p = frame.readParquet(at('polars-default.parquet'))
  t.deepEqual(p.fields.map((c) => c.type), ['int64', 'utf8', 'utf8', 'decimal128(10, 2)'])
  const one = (await client.compute(p.agg({ dec: sum('dec'), cats: count('cat'), s: max('id') }))).get(0)!
  t.true(near(one.dec, 1.9)) // DuckDB: sum(dec) = 1.90
  t.is((await client.compute(p.groupBy('cat').agg({ n: count() }))).numRows, 3)
  t.is((await client.compute(p.filter(col('s').eq('str9')).count())) as unknown as number, 1)
})

test("pandas' to_csv index column (an empty header name) is named column0, as DuckDB names it", async (t) => {
  const f = frame.readCsv(at('pandas-index.csv'))
  t.deepEqual(f.fields.map((c) => [c.name, c.type]), [['column0', 'int64'], ['id', 'int64'], ['x', 'float64']])
  const one = (await client.compute(f.agg({ i: sum('column0'), x: sum('x') }))).get(0)!
  t.deepEqual([Number(one.i), one.x], [190, 37.5]) // DuckDB: sum(column0), sum(x)
})
