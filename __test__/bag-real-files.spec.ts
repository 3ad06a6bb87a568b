// Files as real programs write them, read into bags through the package and
// real workers: Excel's CSV (a byte order mark, ';' and other dialects),
// Parquet in every codec today's writers use, INT64 as numbers or bigints
// and the reductions over bigints.
import test from 'ava'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, frame, type Client } from 'spillway'
import { PARQUET_COMPRESSORS } from '../src/native/parquet-codecs'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-real-files-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

test.serial('readCsv strips a byte order mark by default (Excel), and keeps it with bom: false', async (t) => {
  const f = join(dir, 'excel.csv')
  writeFileSync(f, '\uFEFFid,name\r\n1,ann\r\n2,bob\r\n')
  t.deepEqual(await client.compute(bag.readCsv(f)), [{ id: '1', name: 'ann' }, { id: '2', name: 'bob' }])
  t.deepEqual(await client.compute(bag.readCsv(f, { bom: false }).pluck('\uFEFFid')), ['1', '2'])
  // Cut into blocks, the first one still starts after the mark and the header.
  const big = join(dir, 'excel-big.csv')
  writeFileSync(big, '\uFEFFid,v\n' + Array.from({ length: 300 }, (_, i) => `${i},${i * 2}`).join('\n') + '\n')
  const rows = await client.compute(bag.readCsv(big, { blocksize: 500 }))
  t.is(rows.length, 300)
  t.deepEqual(rows[0], { id: '0', v: '0' })
})

test.serial('readCsv: delimiter, quote, columns and cast, each checked by name', async (t) => {
  const f = join(dir, 'dialect.csv')
  writeFileSync(f, "id;name;score;big\n1;'a;b';1.5;9007199254740993\n2;'c''d';-2e3;12\n")
  const opts = { delimiter: ';', quote: "'" }
  t.deepEqual(await client.compute(bag.readCsv(f, opts)), [
    { id: '1', name: 'a;b', score: '1.5', big: '9007199254740993' },
    { id: '2', name: "c'd", score: '-2e3', big: '12' },
  ])
  // cast: numbers as written become numbers; an integer a number would round stays a string.
  t.deepEqual(await client.compute(bag.readCsv(f, { ...opts, cast: true, columns: ['score', 'big', 'id'] })), [
    { id: 1, score: 1.5, big: '9007199254740993' },
    { id: 2, score: -2000, big: 12 },
  ])
  const unquoted = join(dir, 'unquoted.csv')
  writeFileSync(unquoted, 'a,b\n"x,y\n')
  t.deepEqual(await client.compute(bag.readCsv(unquoted, { quote: false })), [{ a: '"x', b: 'y' }])
  t.throws(() => bag.readCsv(f, { ...opts, columns: ['nope'] }), { code: 'ERR_SPILLWAY_COLUMN_NOT_FOUND', message: /dialect\.csv has no column "nope" \(its header: "id", "name", "score", "big"\)/ })
  t.throws(() => bag.readCsv(f, { quote: 'ab' }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.quote/ })
  t.throws(() => bag.readCsv(f, { delimiter: ';', quote: ';' }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.quote.*not in the delimiter/ })
  t.throws(() => bag.readCsv(f, { cast: 'yes' as any }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.cast/ })
  t.throws(() => bag.readCsv(f, { bom: 1 as any }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.bom/ })
  t.throws(() => bag.readCsv(f, { columns: [] }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.columns/ })
})

const CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'ZSTD', 'LZ4', 'LZ4_RAW'] as const

test.serial('readParquet reads every codec today\'s writers use (hyparquet-writer with the core\'s and zlib\'s compressors)', async (t) => {
  const { parquetWriteFile } = await import('hyparquet-writer')
  const n = 3000
  const ids = Array.from({ length: n }, (_, i) => i)
  for (const codec of CODECS) {
    const f = join(dir, `codec-${codec}.parquet`)
    parquetWriteFile({
      filename: f,
      codec,
      compressors: PARQUET_COMPRESSORS,
      columnData: [
        { name: 'id', data: ids, type: 'INT32' },
        { name: 'word', data: ids.map((i) => `w${i % 17}`), type: 'STRING' },
        { name: 'x', data: ids.map((i) => i / 4), type: 'DOUBLE' },
      ],
      rowGroupSize: 1000,
    })
    const b = bag.readParquet(f)
    t.is(b.npartitions, 3, codec)
    const rows = await client.compute(b)
    t.is(rows.length, n, codec)
    t.deepEqual(rows[2345], { id: 2345, word: 'w16', x: 586.25 }, codec)
    t.is(await client.compute(bag.readParquet(f, { columns: ['x'] }).pluck('x').sum()), (n * (n - 1)) / 2 / 4, codec)
  }
})

test.serial('readParquet refuses a codec no writer of today uses (LZO) when the bag is built, naming the column', async (t) => {
  const { parquetWriteFile } = await import('hyparquet-writer')
  const f = join(dir, 'lzo.parquet')
  parquetWriteFile({ filename: f, codec: 'LZO', compressors: { LZO: (b: Uint8Array) => b }, columnData: [{ name: 'a', data: [1], type: 'INT32' }, { name: 'b', data: [2], type: 'INT32', codec: 'UNCOMPRESSED' }] })
  t.throws(() => bag.readParquet(f), { code: 'ERR_SPILLWAY_READ', message: /column "a" is compressed with LZO, which spillway's Parquet reader cannot read \(it reads UNCOMPRESSED, SNAPPY, GZIP, BROTLI, ZSTD, LZ4, LZ4_RAW\)/ })
  t.deepEqual(await client.compute(bag.readParquet(f, { columns: ['b'] })), [{ b: 2 }])
})

test.serial('readParquet: INT64 as numbers by default (refused past 2^53 naming column and row), as bigints with int64: "bigint"; sum keeps bigints exact', async (t) => {
  const { parquetWriteFile } = await import('hyparquet-writer')
  const small = join(dir, 'int64.parquet')
  parquetWriteFile({ filename: small, codec: 'GZIP', compressors: PARQUET_COMPRESSORS, columnData: [{ name: 'n', data: [1n, 2n, -3n, 40n], type: 'INT64' }], rowGroupSize: 2 })
  t.deepEqual(await client.compute(bag.readParquet(small).pluck('n')), [1, 2, -3, 40])
  t.is(await client.compute(bag.readParquet(small).pluck('n').sum()), 40)
  t.deepEqual(await client.compute(bag.readParquet(small, { int64: 'bigint' }).pluck('n')), [1n, 2n, -3n, 40n])
  const big = join(dir, 'int64-big.parquet')
  const values = [2n ** 62n, 1n, 2n ** 53n + 1n]
  parquetWriteFile({ filename: big, columnData: [{ name: 'id', data: [0, 1, 2], type: 'INT32' }, { name: 'n', data: values, type: 'INT64' }], rowGroupSize: 2 })
  const err = await t.throwsAsync(client.compute(bag.readParquet(big).pluck('n').filter((v: number) => v > 1).count()))
  t.is((err as any).code, 'ERR_SPILLWAY_UNSAFE_INTEGER')
  t.regex(err!.message, /int64-big\.parquet, column "n", row (0: 4611686018427387904|2: 9007199254740993) is past 2\^53 .*int64: 'bigint'/)
  // With bigints, sum is exact and a bigint, over partitions (empty ones too: the filter empties one).
  const exact = bag.readParquet(big, { int64: 'bigint' }).pluck('n')
  t.is(await client.compute(exact.sum()), values.reduce((a, b) => a + b, 0n))
  t.is(await client.compute(exact.filter((v: bigint) => v > 10n).sum()), 2n ** 62n + 2n ** 53n + 1n)
  t.is(await client.compute(exact.filter((v: bigint) => v < 0n).sum()), 0)
  t.is(await client.compute(exact.max()), 2n ** 62n)
  t.is(await client.compute(exact.min()), 1n)
  t.deepEqual(await client.compute(exact.map((v: bigint) => v % 2n).frequencies()), [[0n, 1], [1n, 2]])
  t.is(await client.compute(bag.fromSequence([1n, 3n], { npartitions: 2 }).mean()), 2)
  // Mixed in one partition, or across partitions, is a coded error naming the value.
  const mixed = await t.throwsAsync(client.compute(bag.fromSequence([1n, 2, 3n], { npartitions: 1 }).sum()))
  t.is((mixed as any).code, 'ERR_SPILLWAY_MIXED_NUMBERS')
  t.regex(mixed!.message, /sum\(\) met a number, 2, among bigints: map the items to one kind first/)
  const across = await t.throwsAsync(client.compute(bag.fromSequence([1n, 2], { npartitions: 2 }).sum()))
  t.is((across as any).code, 'ERR_SPILLWAY_MIXED_NUMBERS')
  t.throws(() => bag.readParquet(big, { int64: 'string' as any }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.int64/ })
})

test.serial('toCsv writes each partition\'s records as a CSV file (quoted as needed, gzip by name) that readCsv reads back', async (t) => {
  const { readdirSync, readFileSync } = await import('node:fs')
  const { gunzipSync } = await import('node:zlib')
  const out = join(dir, 'csv-out')
  const rows = Array.from({ length: 40 }, (_, i) => ({ id: i, name: i % 3 ? `n${i}` : `say "hi", ${i}\nbye`, score: i / 2, missing: i % 5 ? null : 'x' }))
  const paths = await client.compute(bag.fromSequence(rows, { npartitions: 4 }).toCsv(join(out, 'part-*.csv')))
  t.deepEqual(paths, [0, 1, 2, 3].map((i) => join(out, `part-${i}.csv`)))
  t.is(readFileSync(paths[0], 'utf8').split('\n')[0], 'id,name,score,missing')
  t.is(readFileSync(paths[0], 'utf8').split('\n')[1], '0,"say ""hi"", 0')
  const back = await client.compute(bag.readCsv(join(out, 'part-*.csv'), { cast: true, quotedNewlines: true }))
  t.deepEqual(back, rows.map((r) => ({ ...r, missing: r.missing ?? '' })))
  t.deepEqual(readdirSync(out).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left')
  // Chosen columns, another delimiter, no header, compressed by name.
  const [gz] = await client.compute(bag.fromSequence(rows.slice(0, 2), { npartitions: 1 }).toCsv(join(out, 'sel-*.csv.gz'), { columns: ['score', 'id'], delimiter: ';', header: false }))
  t.is(gunzipSync(readFileSync(gz)).toString(), '0;0\n0.5;1\n')
  const err = await t.throwsAsync(client.compute(bag.fromSequence(['a'], { npartitions: 1 }).toCsv(join(out, 'bad-*.csv'))))
  t.is((err as any).code, 'ERR_SPILLWAY_WRITE')
  t.regex(err!.message, /bad-0\.csv: item 0 of its partition is a string, not a record/)
  t.throws(() => bag.fromSequence([{}]).toCsv(join(out, 'x.csv')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /pattern/ })
  t.throws(() => bag.fromSequence([{}]).toCsv(join(out, 'x-*.csv'), { delimiter: '"' }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.delimiter/ })
})

test.serial('one toParquet, one schema: column types unified across partitions (integers beside doubles, a column null in some, past 32 bits), read back together by frame.readParquet and DuckDB-style; a column of text in one partition and bytes in another is a coded error', async (t) => {
  const out = join(dir, 'parquet-unified')
  const rows = [
    [{ a: 1, b: 'x', c: null, d: 1 }, { a: 2, b: 'y', c: null, d: 2 }],
    [{ a: 2.5, b: null, c: null, d: 2 ** 40 }],
    [{ a: 3, b: 'z', c: 7, d: 3 }],
  ]
  const b = bag.fromSequence(rows, { npartitions: 3 }).flatMap((r: unknown[]) => r)
  const paths = await client.compute(b.toParquet(join(out, 'part-*.parquet')))
  t.is(paths.length, 3)
  // Before, each file typed its columns by its own rows: INT32 beside DOUBLE, c text where all null, d INT32 past 2^31.
  const f = await client.compute(frame.readParquet(join(out, 'part-*.parquet')))
  t.deepEqual(f.schema.fields.map((x) => `${x.name}:${x.type}`), ['a:Float64', 'b:Utf8', 'c:Int32', 'd:Int64'])
  t.deepEqual([...f.getChild('a')!.toArray()], [1, 2, 2.5, 3])
  t.deepEqual([...f.getChild('c')!], [null, null, null, 7])
  t.deepEqual([...f.getChild('d')!.toArray()], [1n, 2n, 2n ** 40n, 3n])
  const mixed = bag.fromSequence([[{ k: 'text' }], [{ k: Buffer.from('bytes') }]], { npartitions: 2 }).flatMap((r: unknown[]) => r)
  const err = await t.throwsAsync(client.compute(mixed.toParquet(join(out, 'mixed-*.parquet'))))
  t.is((err as any).code, 'ERR_SPILLWAY_WRITE')
  t.regex(err!.message, /column "k" holds (UTF8|BYTES) in some records and (BYTES|UTF8) in others \(in different partitions\)/)
})

test.serial('toParquet writes each partition\'s records as a Parquet file, row groups as items come, that readParquet reads back', async (t) => {
  const { readdirSync } = await import('node:fs')
  const out = join(dir, 'parquet-out')
  const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i, word: `w${i % 7}`, x: i / 4, n: BigInt(i) * 3n }))
  for (const codec of ['SNAPPY', 'GZIP', 'BROTLI', 'ZSTD', 'LZ4_RAW', 'UNCOMPRESSED'] as const) {
    const paths = await client.compute(bag.fromSequence(rows, { npartitions: 3 }).toParquet(join(out, codec, 'part-*.parquet'), { codec, rowGroupSize: 400 }))
    t.deepEqual(paths, [0, 1, 2].map((i) => join(out, codec, `part-${i}.parquet`)), codec)
    const back = bag.readParquet(join(out, codec, 'part-*.parquet'), { int64: 'bigint' })
    t.is(back.npartitions, 9, `${codec}: 1000 rows a file, 400 a row group`)
    t.deepEqual(await client.compute(back), rows, codec)
    t.deepEqual(readdirSync(join(out, codec)).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left')
  }
  const [sel] = await client.compute(bag.fromSequence(rows.slice(0, 3), { npartitions: 1 }).toParquet(join(out, 'sel-*.parquet'), { columns: ['x', 'id'] }))
  t.deepEqual(await client.compute(bag.readParquet(sel)), [{ x: 0, id: 0 }, { x: 0.25, id: 1 }, { x: 0.5, id: 2 }])
  const err = await t.throwsAsync(client.compute(bag.fromSequence([1], { npartitions: 1 }).toParquet(join(out, 'bad-*.parquet'))))
  t.is((err as any).code, 'ERR_SPILLWAY_WRITE')
  t.regex(err!.message, /bad-0\.parquet: item 0 of its partition is a number, not a record/)
  t.throws(() => bag.fromSequence([{}]).toParquet(join(out, 'x-*.parquet'), { codec: 'LZO' as any }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.codec/ })
})
