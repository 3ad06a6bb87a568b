// Parquet files no one here wrote: pyarrow's and DuckDB's, in every codec
// they offer, committed under fixtures/parquet-foreign (make.py there made
// them, with the versions it names), read into bags and frames on every
// machine; bag-real-files.spec.ts covers the codecs with files this process
// writes.
import test from 'ava'
import { join } from 'node:path'
import { bag, col, count, frame, max, sum, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = join(__dirname, 'fixtures', 'parquet-foreign')
const FILES = ['pyarrow-snappy', 'pyarrow-gzip', 'pyarrow-brotli', 'pyarrow-zstd', 'pyarrow-lz4', 'pyarrow-none', 'duckdb-snappy', 'duckdb-gzip', 'duckdb-zstd', 'duckdb-brotli', 'duckdb-lz4', 'duckdb-uncompressed']
let client!: Client
sharedCluster(test, (c) => (client = c))

test.serial('readParquet reads pyarrow\'s and DuckDB\'s files in every codec, INT64 as numbers and as bigints', async (t) => {
  const n = 3000
  for (const f of FILES) {
    const path = join(dir, `${f}.parquet`)
    const b = bag.readParquet(path, { columns: ['id', 'word', 'x'] })
    t.is(await client.compute(b.count()), n, f)
    t.is(await client.compute(b.pluck('id').sum()), (n * (n - 1)) / 2, f)
    t.deepEqual((await client.compute(b.take(2500)))[2499], { id: 2499, word: `w${2499 % 13}`, x: 2499 / 8 }, f)
    const big = bag.readParquet(path, { columns: ['big'], int64: 'bigint' }).pluck('big')
    t.is(await client.compute(big.sum()), BigInt(n) * 2n ** 60n + BigInt((n * (n - 1)) / 2), f)
    const refused = await t.throwsAsync(client.compute(bag.readParquet(path, { columns: ['big'] }).count()))
    t.is((refused as any).code, 'ERR_SPILLWAY_UNSAFE_INTEGER', f)
  }
})

test.serial("frame.readParquet reads pyarrow's and DuckDB's files in every codec: row groups as partitions, INT64 exact", async (t) => {
  const n = 3000
  for (const f of FILES) {
    const sales = frame.readParquet(join(dir, `${f}.parquet`), { blocksize: 1 })
    t.deepEqual(sales.schema, { id: 'int64', big: 'int64', word: 'utf8', x: 'float64' }, f)
    // pyarrow wrote 3 row groups of 1000 rows, DuckDB 2 (it rounds a row group to its 2048-row vectors).
    t.is(sales.npartitions, f.startsWith('duckdb') ? 2 : 3, `${f}: a partition per row group where a row group is past the blocksize`)
    const byWord = await client.compute(sales.filter(col('id').gtEq(1000)).groupBy('word').agg({ n: count(), big: max('big'), id: sum('id'), x: sum('x') }).sortBy('word'))
    const want = new Map<string, { n: number; big: bigint; id: bigint; x: number }>()
    for (let i = 1000; i < n; i++) {
      const w = want.get(`w${i % 13}`) ?? { n: 0, big: 0n, id: 0n, x: 0 }
      want.set(`w${i % 13}`, { n: w.n + 1, big: 2n ** 60n + BigInt(i), id: w.id + BigInt(i), x: w.x + i / 8 })
    }
    const got = byWord.toArray().map((r) => [r.word, Number(r.n), r.big, r.id, r.x])
    // 154 values near 2^60 sum past int64: an error naming the aggregate, as DuckDB would widen and Polars would wrap.
    const over = await t.throwsAsync(client.compute(sales.groupBy('word').agg({ total: sum('big') })))
    t.is((over as any).code, 'ERR_SPILLWAY_FRAME', f)
    t.regex(over!.message, /the aggregate "total" sums integers past int64's range/, f)
    t.deepEqual(got, [...want].sort(([a], [b]) => (a < b ? -1 : 1)).map(([w, v]) => [w, v.n, v.big, v.id, v.x]), f)
  }
})

test.serial("frame.readParquet reads timestamps, dates, decimals, nulls and lists as pyarrow and DuckDB write them", async (t) => {
  for (const w of ['pyarrow', 'duckdb']) {
    const f = frame.readParquet(join(dir, `${w}-types.parquet`))
    t.deepEqual(f.schema, { ts: 'timestamp[us]', day: 'date32', price: 'decimal128(10, 2)', maybe: 'int32', tags: 'list<utf8>' }, w)
    const table = await client.compute(f)
    t.is(table.numRows, 200, w)
    const start = Date.UTC(2026, 0, 1)
    const rows = table.toArray()
    t.deepEqual(rows.map((r) => Number(r.ts)), rows.map((_, i) => start + 37_000 * i), `${w}: timestamps`)
    t.deepEqual(rows.map((r) => Number(r.day)), rows.map((_, i) => start + 86_400_000 * (i % 40)), `${w}: dates`)
    t.deepEqual(rows.map((r) => r.maybe), rows.map((_, i) => (i % 3 === 0 ? null : i)), `${w}: nulls`)
    t.deepEqual(rows.map((r) => (r.tags ? [...r.tags] : null)), rows.map((_, i) => (i % 2 ? [`t${i % 4}`, `u${i % 5}`] : [])), `${w}: lists`)
    const items = await client.compute(bag.readParquet(join(dir, `${w}-types.parquet`), { columns: ['price'] }).pluck('price'))
    t.deepEqual(items, rows.map((_, i) => (i * 1.25).toFixed(2)), `${w}: decimals as the bag's exact strings`)
  }
})
