// Frames from and to files through the package and real workers: Parquet
// written by hyparquet-writer (each codec it can write, INT64, timestamps,
// decimals) and by the core (each codec, nested columns), NDJSON with nested
// values and nulls, the four writers read back, and fromArrow; every answer
// checked against the plain-JS rows the files were made of.
import test from 'ava'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import { execFileSync } from 'node:child_process'
import { Table, tableFromArrays, tableFromIPC, TimestampMillisecond, vectorFromArray } from 'apache-arrow'
import { col, count, frame, sum, type Client, type FrameTable } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-io-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

/** A fresh directory under the test's own. */
function sub(name: string): string {
  const d = join(dir, name)
  mkdirSync(d, { recursive: true })
  return d
}

/** The table's rows as plain objects, bigints and Dates as numbers, nested values as JSON-able. */
function rows(t: FrameTable): Record<string, unknown>[] {
  return t.toArray().map((r) => JSON.parse(JSON.stringify(r.toJSON(), (_, v) => (typeof v === 'bigint' ? Number(v) : v))))
}

interface Sale {
  id: bigint
  shop: string | null
  price: number | null
  at: Date
}

function sales(n: number, from = 0): Sale[] {
  const shops = ['north', 'south', null, 'east']
  return Array.from({ length: n }, (_, k) => {
    const i = from + k
    return { id: BigInt(i) * 3_000_000_000n, shop: shops[i % 4], price: i % 5 === 0 ? null : (i % 40) / 4, at: new Date(Date.UTC(2026, 0, 1) + i * 60_000) }
  })
}

const COMPRESSORS = { GZIP: (b: Uint8Array) => new Uint8Array(gzipSync(b)), BROTLI: (b: Uint8Array) => new Uint8Array(brotliCompressSync(b)) }

async function writeHyparquet(path: string, rs: Sale[], codec: 'SNAPPY' | 'UNCOMPRESSED' | 'GZIP' | 'BROTLI'): Promise<void> {
  const { parquetWriteFile } = await import('hyparquet-writer')
  const columnData = [
    { name: 'id', data: rs.map((r) => r.id), type: 'INT64' as const },
    { name: 'shop', data: rs.map((r) => r.shop), type: 'STRING' as const },
    { name: 'price', data: rs.map((r) => r.price), type: 'DOUBLE' as const },
    { name: 'at', data: rs.map((r) => r.at), type: 'TIMESTAMP' as const },
    // Cents as a DECIMAL(12, 2) on INT64: read back as decimal128(12, 2).
    { name: 'amount', data: rs.map((r) => BigInt(Number(r.id % 100000n) * 100 + 25)) },
  ]
  const { schemaFromColumnData } = await import('hyparquet-writer')
  const schema = schemaFromColumnData({ columnData, schemaOverrides: { amount: { name: 'amount', type: 'INT64', converted_type: 'DECIMAL', precision: 12, scale: 2, repetition_type: 'REQUIRED' } } })
  // The schema carries the types: hyparquet-writer takes them in one place only.
  parquetWriteFile({ filename: path, columnData: columnData.map(({ name, data }) => ({ name, data })), schema, codec, compressors: COMPRESSORS, rowGroupSize: 40 })
}

test('readParquet reads hyparquet-writer files in each codec: INT64, strings, doubles, timestamps, decimals, row groups as partitions', async (t) => {
  const d = sub('hyparquet')
  const all: Sale[] = []
  const codecs = ['SNAPPY', 'UNCOMPRESSED', 'GZIP', 'BROTLI'] as const
  for (const [k, codec] of codecs.entries()) {
    const rs = sales(100, k * 100)
    all.push(...rs)
    await writeHyparquet(join(d, `part-${k}.parquet`), rs, codec)
  }
  // Each file's 3 row groups of 40, 40, 20 rows: small blocks keep them apart.
  const f = frame.readParquet(join(d, '*.parquet'), { blocksize: 1 })
  t.deepEqual(f.schema, { id: 'int64', shop: 'utf8', price: 'float64', at: 'timestamp[ms, UTC]', amount: 'decimal128(12, 2)' })
  t.is(f.npartitions, 12)
  const got = await client.compute(f.filter(col('price').gtEq(5)).select('id', 'shop', 'at', 'amount'))
  const want = all.filter((r) => r.price !== null && r.price >= 5)
  t.is(got.numRows, want.length)
  t.deepEqual(got.getChild('id')!.toArray(), BigInt64Array.from(want.map((r) => r.id)))
  t.deepEqual([...got.getChild('shop')!], want.map((r) => r.shop))
  t.deepEqual([...got.getChild('at')!].map(Number), want.map((r) => r.at.getTime()))
  t.is(String(got.getChild('amount')!.get(0)), String(Number(want[0].id % 100000n) * 100 + 25))
  // Projection: only the columns asked for, in that order.
  const proj = await client.compute(frame.readParquet(join(d, 'part-0.parquet'), { columns: ['price', 'shop'] }))
  t.deepEqual(proj.schema.fields.map((x) => x.name), ['price', 'shop'])
  t.deepEqual([...proj.getChild('price')!], all.slice(0, 100).map((r) => r.price))
})

test('a filter on row-group statistics gives the same rows as reading them all', async (t) => {
  const d = sub('stats')
  const rs = sales(200)
  await writeHyparquet(join(d, 'a.parquet'), rs, 'SNAPPY')
  const f = frame.readParquet(join(d, 'a.parquet'))
  for (const [pred, keep] of [
    [col('id').gt(150n * 3_000_000_000n), (r: Sale) => r.id > 450_000_000_000n],
    [col('id').lt(30n * 3_000_000_000n).and(col('shop').eq('south')), (r: Sale) => r.id < 90_000_000_000n && r.shop === 'south'],
    [col('id').eq(-1), () => false],
  ] as const) {
    const got = await client.compute(f.filter(pred).groupBy('shop').agg({ n: count() }))
    const want = new Map<string | null, number>()
    for (const r of rs.filter(keep)) want.set(r.shop, (want.get(r.shop) ?? 0) + 1)
    t.deepEqual(new Map(rows(got).map((r) => [r.shop as string | null, r.n as number])), want, pred.toString())
  }
})

const NDJSON_A = [
  { user: 'ann', n: 1, tags: ['a', 'b'], geo: { lat: 1.5, city: 'Oslo' } },
  { user: 'bob', n: null, tags: null, geo: null },
  { user: null, n: 3, tags: [], geo: { lat: 2, city: null } },
]
const NDJSON_B = [{ user: 'cid', n: 4.5, geo: { lat: -1 }, extra: true }]

function writeNdjson(path: string, objs: object[]): void {
  writeFileSync(path, objs.map((o) => JSON.stringify(o)).join('\n') + '\n')
}

test('readNdjson infers nested structs and lists unified across files, with nulls and missing keys', async (t) => {
  const d = sub('ndjson')
  writeNdjson(join(d, 'a.ndjson'), NDJSON_A)
  writeNdjson(join(d, 'b.ndjson'), NDJSON_B)
  const f = frame.readNdjson(join(d, '*.ndjson'), { blocksize: 40 })
  t.deepEqual(f.schema, { user: 'utf8', n: 'float64', tags: 'list<utf8>', geo: 'struct<"lat": float64, "city": utf8>', extra: 'bool' })
  t.true(f.npartitions > 2)
  const got = rows(await client.compute(f))
  t.deepEqual(got, [
    { user: 'ann', n: 1, tags: ['a', 'b'], geo: { lat: 1.5, city: 'Oslo' }, extra: null },
    { user: 'bob', n: null, tags: null, geo: null, extra: null },
    { user: null, n: 3, tags: [], geo: { lat: 2, city: null }, extra: null },
    { user: 'cid', n: 4.5, tags: null, geo: { lat: -1, city: null }, extra: true },
  ])
  const sel = await client.compute(frame.readNdjson(join(d, 'a.ndjson'), { columns: ['n', 'user'], schema: { n: 'int64' } }))
  t.deepEqual(rows(sel), [{ n: 1, user: 'ann' }, { n: null, user: 'bob' }, { n: 3, user: null }])
})

test('a value that does not fit its NDJSON column fails with ERR_SPILLWAY_READ naming file, line and column', async (t) => {
  const d = sub('ndjson-bad')
  const path = join(d, 'bad.ndjson')
  writeFileSync(path, '{"k":1,"g":{"y":2}}\n{"k":2,"g":{"y":3}}\n{"k":3,"g":{"y":{"deep":1}}}\n')
  const e = await t.throwsAsync(client.compute(frame.readNdjson(path, { sampleBytes: 20 })))
  t.is((e as any).code, 'ERR_SPILLWAY_READ')
  t.regex(e!.message, /bad\.ndjson/)
  t.regex(e!.message, /line 3, column "g\.y"/)
})

test('toParquet in each codec round-trips nested, decimal and timestamp columns through readParquet; files are owner-only', async (t) => {
  const d = sub('ndjson-src')
  writeNdjson(join(d, 'a.ndjson'), NDJSON_A)
  writeNdjson(join(d, 'b.ndjson'), NDJSON_B)
  const src = frame.readNdjson(join(d, '*.ndjson'))
  const want = rows(await client.compute(src))
  for (const compression of ['zstd', 'snappy', 'gzip', 'lz4', 'brotli', 'none'] as const) {
    const out = join(dir, `out-${compression}`)
    const paths = await client.compute(src.toParquet(join(out, 'part-*.parquet'), { compression }))
    t.deepEqual(paths, [join(out, 'part-0.parquet'), join(out, 'part-1.parquet')])
    t.is(statSync(paths[0]).mode & 0o777, 0o600)
    t.is(statSync(out).mode & 0o777, 0o700)
    t.deepEqual(readdirSync(out).sort(), ['part-0.parquet', 'part-1.parquet'], 'no temporary file left')
    const back = frame.readParquet(paths)
    t.deepEqual(back.schema, src.schema, compression)
    t.deepEqual(rows(await client.compute(back)), want, compression)
  }
  // hyparquet's decimals and timestamps, written again by the core and read back.
  const h = sub('hyp-rt')
  await writeHyparquet(join(h, 'a.parquet'), sales(50), 'SNAPPY')
  const hf = frame.readParquet(join(h, 'a.parquet'))
  const [p] = await client.compute(hf.toParquet(join(h, 'out', 'x-*.parquet')))
  t.deepEqual(frame.readParquet(p).schema, hf.schema)
  t.deepEqual(rows(await client.compute(frame.readParquet(p))), rows(await client.compute(hf)))
})

test('toCsv, toNdjson and toArrowIpc write one file per partition that read back as written', async (t) => {
  const table = tableFromArrays({ k: ['a', 'b', 'a', 'c', 'b'], v: Float64Array.from([1, 2.5, 3, 4, 5]) })
  const f = frame.fromArrow(table, { npartitions: 2 })
  const want = [{ k: 'a', v: 1 }, { k: 'b', v: 2.5 }, { k: 'a', v: 3 }, { k: 'c', v: 4 }, { k: 'b', v: 5 }]
  const csv = await client.compute(f.toCsv(join(dir, 'csv', '*.csv')))
  t.is(readFileSync(csv[0], 'utf8'), 'k,v\na,1.0\nb,2.5\na,3.0\n')
  t.deepEqual(rows(await client.compute(frame.readCsv(csv))), want)
  const nd = await client.compute(f.toNdjson(join(dir, 'nd', 'p*.ndjson')))
  t.is(readFileSync(nd[1], 'utf8'), '{"k":"c","v":4.0}\n{"k":"b","v":5.0}\n')
  t.deepEqual(rows(await client.compute(frame.readNdjson(nd))), want)
  const ipc = await client.compute(f.toArrowIpc(join(dir, 'ipc', '*.arrow')))
  t.deepEqual(ipc.flatMap((p) => rows(tableFromIPC(readFileSync(p)))), want)
  const e = t.throws(() => f.toParquet(join(dir, 'no-star.parquet')))
  t.is((e as any).code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.regex(e!.message, /pattern.*'\*'/s)
  t.throws(() => f.toParquet(join(dir, 'x-*.parquet'), { compression: 'lzo' as never }), { message: /compression.*'zstd', 'snappy'/s })
})

test('dt parts of a timestamp with a time zone are refused when the frame is built, naming the column and its type; cast to one without a zone, they compute', async (t) => {
  const ms = [Date.UTC(2024, 0, 2, 3, 4, 5), Date.UTC(1969, 11, 31, 23, 0, 0)]
  const table = new Table({ ts: vectorFromArray(ms, new TimestampMillisecond('UTC')) })
  const f = frame.fromArrow(table)
  t.is(f.schema.ts, 'timestamp[ms, UTC]')
  for (const part of ['year', 'month', 'day', 'weekday', 'hour', 'minute', 'second'] as const) {
    t.throws(() => f.withColumns({ p: col('ts').dt[part]() }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /col\("ts"\)\.dt\.\w+\(\)[\s\S]*timestamp\[ms, UTC\][\s\S]*without a time zone/ })
  }
  const hours = f.select(col('ts').cast('timestamp[ms]').dt.hour().alias('h'))
  t.deepEqual(rows(await client.compute(hours)), [{ h: 3 }, { h: 23 }])
})

test('fromArrow scatters a table into partitions that filter, group and come back as they went', async (t) => {
  const n = 1000
  const table = tableFromArrays({ id: Int32Array.from({ length: n }, (_, i) => i), g: Array.from({ length: n }, (_, i) => ['x', 'y', 'z'][i % 3]), v: Float64Array.from({ length: n }, (_, i) => i / 2) })
  const f = frame.fromArrow(table, { npartitions: 4 })
  t.is(f.npartitions, 4)
  t.deepEqual(f.schema, { id: 'int32', g: 'utf8', v: 'float64' })
  t.deepEqual(rows(await client.compute(f)), rows(table))
  const got = rows(await client.compute(f.filter(col('id').gtEq(10)).groupBy('g').agg({ n: count(), s: sum('v') })))
  const want: Record<string, { n: number; s: number }> = {}
  for (let i = 10; i < n; i++) {
    const g = ['x', 'y', 'z'][i % 3]
    want[g] ??= { n: 0, s: 0 }
    want[g].n++
    want[g].s += i / 2
  }
  t.deepEqual(Object.fromEntries(got.map((r) => [r.g, { n: r.n, s: r.s }])), want)
  t.throws(() => frame.fromArrow({} as never), { message: /apache-arrow Table/ })
})

test('pyarrow, Polars and DuckDB read the Parquet frames write (interop; needs bench/.venv)', async (t) => {
  const python = join(process.cwd(), 'bench', '.venv', 'bin', 'python')
  if (!existsSync(python)) {
    t.log(`no ${python}: interop with pyarrow and DuckDB not checked (bench/setup-venv.sh makes it)`)
    t.pass()
    return
  }
  const d = sub('interop')
  writeNdjson(join(d, 'a.ndjson'), NDJSON_A)
  const [p] = await client.compute(frame.readNdjson(join(d, 'a.ndjson')).toParquet(join(d, 'out-*.parquet')))
  const script = `
import sys, json, pyarrow.parquet as pq, duckdb, polars as pl
t = pq.read_table(sys.argv[1])
d = duckdb.sql(f"select user, n, len(tags) as nt, geo.city as city from read_parquet('{sys.argv[1]}')").fetchall()
print(json.dumps({"pa": t.to_pylist(), "pl": pl.read_parquet(sys.argv[1]).to_dicts(), "duck": [list(r) for r in d]}))
`
  const out = JSON.parse(execFileSync(python, ['-c', script, p], { encoding: 'utf8' }))
  t.deepEqual(out.pa, NDJSON_A)
  t.deepEqual(out.pl, NDJSON_A)
  t.deepEqual(out.duck, [['ann', 1, 2, 'Oslo'], ['bob', null, null, null], [null, 3, 0, null]])
})
