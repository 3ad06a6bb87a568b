// Bags over CSV and Parquet files and written out as text, through the
// package and real workers.
import test from 'ava'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { bag, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-bag-files-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(async () => {
  rmSync(dir, { recursive: true, force: true })
})

test.serial('readCsv: each file header for all its blocks, records against a plain parse', async (t) => {
  const sub = join(dir, 'csv')
  mkdirSync(sub)
  const expected: Record<string, string>[] = []
  for (let f = 0; f < 3; f++) {
    const cols = f === 2 ? ['b', 'a'] : ['a', 'b']
    const rows: string[] = [cols.join(',')]
    for (let i = 0; i < 200; i++) {
      const rec = { a: `a${f}-${i}`, b: `"q,${i}"` }
      rows.push(cols.map((c) => (rec as any)[c]).join(','))
      expected.push({ a: `a${f}-${i}`, b: `q,${i}` })
    }
    writeFileSync(join(sub, `f${f}.csv`), rows.join('\n') + '\n')
  }
  const b = bag.readCsv(join(sub, '*.csv'), { blocksize: 1000 })
  t.true(b.npartitions > 3)
  const got = await client.compute(b)
  t.deepEqual(got, expected)
})

test.serial('readCsv: quoted newlines are read right with quotedNewlines, and a cut one is a coded error pointing to it', async (t) => {
  const f = join(dir, 'quoted.csv')
  const rows = ['id,text']
  for (let i = 0; i < 50; i++) rows.push(`${i},"line one\nline two of ${i}"`)
  writeFileSync(f, rows.join('\n') + '\n')
  const whole = await client.compute(bag.readCsv(f, { quotedNewlines: true, blocksize: 100 }))
  t.is(whole.length, 50)
  t.deepEqual(whole[7], { id: '7', text: 'line one\nline two of 7' })
  const err = await t.throwsAsync(client.compute(bag.readCsv(f, { blocksize: 100 }).count()))
  t.regex(err!.message, /quotedNewlines/)
  t.regex(err!.message, /quoted\.csv/)
})

test.serial('readParquet: one partition per row group (or rowGroupsPerPartition), columns', async (t) => {
  const { parquetWriteFile } = await import('hyparquet-writer')
  const f = join(dir, 'trips.parquet')
  const n = 2500
  const ids = Array.from({ length: n }, (_, i) => i)
  parquetWriteFile({
    filename: f,
    columnData: [
      { name: 'id', data: ids, type: 'INT32' },
      { name: 'city', data: ids.map((i) => ['ams', 'ber', 'cph'][i % 3]), type: 'STRING' },
      { name: 'km', data: ids.map((i) => i / 10), type: 'DOUBLE' },
    ],
    rowGroupSize: 1000,
  })
  const b = bag.readParquet(f)
  t.is(b.npartitions, 3)
  t.is(bag.readParquet(f, { rowGroupsPerPartition: 2 }).npartitions, 2)
  const rows = await client.compute(b)
  t.is(rows.length, n)
  t.deepEqual(rows[1234], { id: 1234, city: 'ber', km: 123.4 })
  const cities = await client.compute(bag.readParquet(f, { columns: ['city'] }).pluck('city').frequencies())
  t.deepEqual(new Map(cities as [string, number][]), new Map([['ams', 834], ['ber', 833], ['cph', 833]]))
  t.throws(() => bag.readParquet(join(dir, 'quoted.csv')), { code: 'ERR_SPILLWAY_READ', message: /not a Parquet file/ })
})

test.serial('toTextfiles writes one complete file per partition (gzip by name) and gives the paths', async (t) => {
  const out = join(dir, 'out')
  const items = Array.from({ length: 100 }, (_, i) => ({ i }))
  const paths = await client.compute(bag.fromSequence(items, { npartitions: 4 }).map(JSON.stringify).toTextfiles(join(out, 'part-*.ndjson.gz')))
  t.deepEqual(paths, [0, 1, 2, 3].map((i) => join(out, `part-${i}.ndjson.gz`)))
  const back = paths.flatMap((p: string) => gunzipSync(readFileSync(p)).toString().trim().split('\n').map((l) => JSON.parse(l)))
  t.deepEqual(back, items)
  t.deepEqual(readdirSync(out).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left')
  // Written again (a repeated task), each file is replaced whole.
  await client.compute(bag.fromSequence(items, { npartitions: 4 }).map(JSON.stringify).toTextfiles(join(out, 'part-*.ndjson.gz')))
  t.is(readdirSync(out).length, 4)
  t.true(existsSync(join(out, 'part-3.ndjson.gz')))
  t.throws(() => bag.fromSequence([1]).toTextfiles(join(out, 'no-star.txt')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /pattern/ })
})
