// CSV columns' types as a user meets them: a schema given instead of
// inference (checked before any file is read), types inferred per file and
// unified across files (or an error naming both files and the column), and a
// value that does not fit its type failing the compute with the file, row,
// line and column. Real files, real workers, answers written out by hand.
import test from 'ava'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { frame, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-read-types-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

function files(sub: string, texts: Record<string, string>): string {
  const d = join(dir, sub)
  mkdirSync(d)
  for (const [name, text] of Object.entries(texts)) writeFileSync(join(d, name), text)
  return d
}

const iso = (v: unknown) => (v === null ? null : new Date(v as number).toISOString())

test.serial('a schema given is the frame\'s types: ints, text, floats, dates and timestamps read as given', async (t) => {
  const d = files('given', { 'a.csv': 'id,name,price,day,ts\n1,ann,2.5,2024-01-31,2024-01-31T10:00:00.250\n2,,3,,\n', 'b.csv': 'id,name,price,day,ts\n3,"b, c",4.75,2025-12-01,2025-12-01T00:00:01\n' })
  // Inference alone would make id int64 and price float64 too; the given types differ to show they are used.
  const f = frame.readCsv(join(d, '*.csv'), { schema: { id: 'int32', name: 'utf8', price: 'float32', day: 'date32', ts: 'timestamp[ms]' } })
  t.deepEqual(f.schema, { id: 'int32', name: 'utf8', price: 'float32', day: 'date32', ts: 'timestamp[ms]' })
  const rows = (await client.compute(f)).toArray().map((r) => ({ id: r.id, name: r.name, price: r.price, day: iso(r.day), ts: iso(r.ts) }))
  t.deepEqual(rows, [
    { id: 1, name: 'ann', price: 2.5, day: '2024-01-31T00:00:00.000Z', ts: '2024-01-31T10:00:00.250Z' },
    { id: 2, name: null, price: 3, day: null, ts: null },
    { id: 3, name: 'b, c', price: 4.75, day: '2025-12-01T00:00:00.000Z', ts: '2025-12-01T00:00:01.000Z' },
  ])
})

test.serial('a bad schema is an ArgumentError naming the column and the types allowed, before any file is read', (t) => {
  const missing = join(dir, 'no-such-dir', 'x.csv')
  const e = t.throws(() => frame.readCsv(missing, { schema: { id: 'int46' as any } }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
  t.regex(e!.message, /options\.schema\.id/)
  t.regex(e!.message, /int46/)
  t.regex(e!.message, /'int8'…'int64'[\s\S]*'utf8'[\s\S]*'date32'[\s\S]*timestamp\[s\|ms\|us\|ns\]/)
  t.throws(() => frame.readCsv(missing, { schema: ['int64'] as any }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.schema[\s\S]*column names to types/ })
  const d = files('named', { 'a.csv': 'id,v\n1,2\n' })
  t.throws(() => frame.readCsv(join(d, 'a.csv'), { schema: { vv: 'int64' } }), { code: 'ERR_SPILLWAY_COLUMN_NOT_FOUND', message: /"vv"[\s\S]*"id", "v"/ })
})

test.serial('a value that does not parse as its type names the file, the row, the line and the column', async (t) => {
  // Row 3 is on line 5: row 2 holds a quoted newline. Small blocks put the bad row in a later partition.
  const d = files('bad', { 'ok.csv': 'id,note,day\n1,x,2024-01-01\n', 'bad.csv': 'id,note,day\n1,a,2024-01-01\n2,"two\nlines",2024-01-02\n3,c,2024-02-30\n4,d,2024-01-04\n' })
  const f = frame.readCsv(join(d, '*.csv'), { schema: { id: 'int64', note: 'utf8', day: 'date32' }, blocksize: 48 })
  t.true(f.npartitions > 2)
  const e = await t.throwsAsync(client.compute(f), { code: 'ERR_SPILLWAY_READ' })
  t.true(e!.message.includes(`${join(d, 'bad.csv')}: row 3 (line 5), column "day": "2024-02-30" is not a valid date32`), e!.message)
  // A row with a field too many (past the sample, which would refuse it) is a bad row, told the same way.
  const g = files('fields', { 'f.csv': 'id,v\n1,2\n2,3,4\n' })
  const e2 = await t.throwsAsync(client.compute(frame.readCsv(join(g, 'f.csv'), { schema: { id: 'int64', v: 'int64' }, sampleBytes: 5 })), { code: 'ERR_SPILLWAY_READ' })
  t.regex(e2!.message, /f\.csv: row 2 \(line 3\) has [\s\S]*fields where the header has 2/)
})

test.serial('types inferred per file unify across files: ints and floats make float64, text wins, an empty column takes the other', async (t) => {
  const d = files('unify', {
    'a.csv': 'k,n,code,e,at\nx,1,7,,2024-01-01\n',
    'b.csv': 'k,n,code,e,at\ny,2.5,A7,true,2024-01-02T12:00:00\n',
    'c.csv': 'k,n,code,e,at\nz,3,8,,\n',
  })
  const f = frame.readCsv(join(d, '*.csv'))
  t.deepEqual(f.schema, { k: 'utf8', n: 'float64', code: 'utf8', e: 'bool', at: 'timestamp[s]' })
  const rows = (await client.compute(f)).toArray().map((r) => ({ k: r.k, n: r.n, code: r.code, e: r.e, at: iso(r.at) }))
  t.deepEqual(rows, [
    { k: 'x', n: 1, code: '7', e: null, at: '2024-01-01T00:00:00.000Z' },
    { k: 'y', n: 2.5, code: 'A7', e: true, at: '2024-01-02T12:00:00.000Z' },
    { k: 'z', n: 3, code: '8', e: null, at: null },
  ])
})

test.serial('types that do not unify across files are an error naming both files and the column; a schema for it resolves it', async (t) => {
  const d = files('conflict', { 'a.csv': 'id,flag\n1,2024-03-01\n', 'b.csv': 'id,flag\n2,true\n' })
  const e = t.throws(() => frame.readCsv(join(d, '*.csv')), { code: 'ERR_SPILLWAY_READ' })
  t.true(e!.message.includes(`reading ${join(d, 'b.csv')}: column "flag" samples as bool here but as date32 in ${join(d, 'a.csv')}`), e!.message)
  t.regex(e!.message, /give its type in `schema`/)
  const table = await client.compute(frame.readCsv(join(d, '*.csv'), { schema: { flag: 'utf8' } }))
  t.deepEqual(table.toArray().map((r) => [Number(r.id), r.flag]), [
    [1, '2024-03-01'],
    [2, 'true'],
  ])
})

test.serial('columns keeps those named, in that order; a name the files do not have is an error listing those there are', async (t) => {
  const d = files('columns', { 'a.csv': 'id,name,price\n1,ann,2.5\n2,bob,\n' })
  const f = frame.readCsv(join(d, 'a.csv'), { columns: ['price', 'id'], schema: { id: 'int64', name: 'utf8', price: 'float64' } })
  t.deepEqual(f.schema, { price: 'float64', id: 'int64' })
  t.deepEqual((await client.compute(f)).toArray().map((r) => [r.price, Number(r.id)]), [
    [2.5, 1],
    [null, 2],
  ])
  t.throws(() => frame.readCsv(join(d, 'a.csv'), { columns: ['id', 'cost'] }), { code: 'ERR_SPILLWAY_COLUMN_NOT_FOUND', message: /"cost"[\s\S]*"id", "name", "price"/ })
  t.throws(() => frame.readCsv(join(d, 'a.csv'), { columns: [] }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.columns/ })
})

test.serial('the delimiter is sniffed from the first file (;, tab, |) unless given, and a repeated header name is renamed name_1', async (t) => {
  const d = files('sniff', { 'semi.csv': 'day;amount;note\n2024-01-31;12.5;"a;b"\n2024-02-01;7;x\n', 'tab.tsv': 'x\ty\n1\t2\n', 'pipe.csv': 'v|w|v\n1|"p|q"|3\n', 'one.csv': 'only\n1\n2\n' })
  const semi = frame.readCsv(join(d, 'semi.csv'))
  t.deepEqual(semi.schema, { day: 'date32', amount: 'float64', note: 'utf8' })
  t.deepEqual((await client.compute(semi)).toArray().map((r) => [iso(r.day), r.amount, r.note]), [['2024-01-31T00:00:00.000Z', 12.5, 'a;b'], ['2024-02-01T00:00:00.000Z', 7, 'x']])
  t.deepEqual(frame.readCsv(join(d, 'tab.tsv')).schema, { x: 'int64', y: 'int64' })
  const pipe = frame.readCsv(join(d, 'pipe.csv'))
  t.deepEqual(pipe.schema, { v: 'int64', w: 'utf8', v_1: 'int64' })
  t.deepEqual((await client.compute(pipe.select('v_1', 'v'))).toArray().map((r) => [Number(r.v_1), Number(r.v)]), [[3, 1]])
  t.deepEqual(frame.readCsv(join(d, 'one.csv')).schema, { only: 'int64' })
  // A delimiter given is used as given: the ';' file is then one column.
  t.deepEqual(Object.keys(frame.readCsv(join(d, 'semi.csv'), { delimiter: ',' }).schema), ['day;amount;note'])
})
