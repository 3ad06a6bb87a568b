// An interop extra: Parquet files written by pyarrow and DuckDB in each
// codec they offer, read into bags. Skipped (with a log) where the bench
// venv (bench/setup-venv.sh) is missing; bag-real-files.spec.ts covers the
// codecs with files this process writes.
import test from 'ava'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { bag, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const python = resolve(__dirname, '../bench/.venv/bin/python')
const has = existsSync(python) && (() => {
  try {
    execFileSync(python, ['-c', 'import pyarrow, duckdb'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
const dir = mkdtempSync(join(tmpdir(), 'spillway-parquet-interop-'))
let client!: Client
if (has) sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

const WRITE = `
import sys, pyarrow as pa, pyarrow.parquet as pq, duckdb
d = sys.argv[1]
n = 5000
t = pa.table({'id': pa.array(range(n), pa.int64()), 'big': pa.array([2**60 + i for i in range(n)], pa.int64()), 'word': [f'w{i % 13}' for i in range(n)], 'x': [i / 8 for i in range(n)]})
for c in ['snappy', 'gzip', 'brotli', 'zstd', 'lz4', 'none']:
    pq.write_table(t, f'{d}/pyarrow-{c}.parquet', compression=c, row_group_size=2000)
con = duckdb.connect()
con.register('t', t)
for c in ['snappy', 'gzip', 'zstd', 'brotli', 'lz4', 'uncompressed']:
    con.execute(f"COPY t TO '{d}/duckdb-{c}.parquet' (FORMAT parquet, COMPRESSION {c}, ROW_GROUP_SIZE 2000)")
`

test.serial('readParquet reads pyarrow\'s and DuckDB\'s files in every codec, INT64 as numbers and as bigints', async (t) => {
  if (!has) return t.pass(`skipped: no ${python} with pyarrow and duckdb (bench/setup-venv.sh makes it)`)
  execFileSync(python, ['-c', WRITE, dir], { stdio: 'inherit' })
  const n = 5000
  for (const f of ['pyarrow-snappy', 'pyarrow-gzip', 'pyarrow-brotli', 'pyarrow-zstd', 'pyarrow-lz4', 'pyarrow-none', 'duckdb-snappy', 'duckdb-gzip', 'duckdb-zstd', 'duckdb-brotli', 'duckdb-lz4', 'duckdb-uncompressed']) {
    const path = join(dir, `${f}.parquet`)
    const b = bag.readParquet(path, { columns: ['id', 'word', 'x'] })
    t.is(await client.compute(b.count()), n, f)
    t.is(await client.compute(b.pluck('id').sum()), (n * (n - 1)) / 2, f)
    t.deepEqual((await client.compute(b.take(4000)))[3999], { id: 3999, word: `w${3999 % 13}`, x: 3999 / 8 }, f)
    const big = bag.readParquet(path, { columns: ['big'], int64: 'bigint' }).pluck('big')
    t.is(await client.compute(big.sum()), BigInt(n) * 2n ** 60n + BigInt((n * (n - 1)) / 2), f)
    const refused = await t.throwsAsync(client.compute(bag.readParquet(path, { columns: ['big'] }).count()))
    t.is((refused as any).code, 'ERR_SPILLWAY_UNSAFE_INTEGER', f)
  }
})
