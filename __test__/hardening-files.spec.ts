// Hardening the bag's file paths (issue 32): writers that would overwrite
// their own output or write '[object Object]', text that decodes wrong,
// Parquet values that lose precision, files read twice or not as planned.
// Through the package, real workers and real files in a scratch directory.
import test from 'ava'
import { execFileSync } from 'node:child_process'
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { bag, type Client } from 'spillway'
import { sharedCluster, until } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-hardening-files-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

function scratch(name: string): string {
  const d = join(dir, name)
  mkdirSync(d)
  return d
}

test.serial("toTextfiles: the '*' must stand in the file name, checked when the bag is built", (t) => {
  const out = scratch('star')
  const b = bag.fromSequence(['a', 'b'], { npartitions: 2 })
  for (const p of [join(out, 'part-*', '..', 'all.txt'), join(out, '*', 'data.txt'), join(out, 'p-*-*.txt'), join(out, 'plain.txt')]) {
    const err = t.throws(() => b.toTextfiles(p), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
    t.regex(err!.message, /pattern: got .*allowed: a path with one '\*' in its file name/s, p)
  }
  t.deepEqual(readdirSync(out), [])
})

test.serial('toTextfiles: an item that is not a string is refused by its type and index, nothing written', async (t) => {
  const out = scratch('not-strings')
  const cases: [unknown, RegExp][] = [
    [{ a: 1 }, /item 1 of its partition is an object, not a string/],
    [[1, 2], /item 1 of its partition is an array, not a string/],
    [7, /item 1 of its partition is a number, not a string/],
    [null, /item 1 of its partition is null, not a string/],
    [new Map(), /item 1 of its partition is a Map, not a string/],
  ]
  for (const [item, msg] of cases) {
    const err = await t.throwsAsync(client.compute(bag.fromSequence(['ok', item], { npartitions: 1 }).toTextfiles(join(out, 'part-*.txt'))), { code: 'ERR_SPILLWAY_WRITE' })
    t.regex(err!.message, msg)
    t.regex(err!.message, /part-0\.txt/)
    t.regex(err!.message, /JSON\.stringify/)
  }
  t.deepEqual(readdirSync(out), [])
})

test.serial('toTextfiles: a path component that is a file is ERR_SPILLWAY_WRITE naming the path', async (t) => {
  const out = scratch('component')
  writeFileSync(join(out, 'blocker'), 'a file, not a directory\n')
  const target = join(out, 'blocker', 'sub', 'part-*.txt')
  const err = await t.throwsAsync(client.compute(bag.fromSequence(['x'], { npartitions: 1 }).toTextfiles(target)), { code: 'ERR_SPILLWAY_WRITE' })
  t.regex(err!.message, /could not write .*blocker\/sub\/part-0\.txt/)
  t.regex(err!.message, /ENOTDIR|EEXIST/)
  t.is(readFileSync(join(out, 'blocker'), 'utf8'), 'a file, not a directory\n')
  t.false(existsSync(join(out, 'sub')))
})

test.serial('readText over a symlink loop under **: every real file read once', async (t) => {
  const d = scratch('loop')
  writeFileSync(join(d, 'a.txt'), 'a1\na2\n')
  writeFileSync(join(d, 'b.txt'), 'b1\nb2\n')
  symlinkSync('..', join(d, 'up'))
  symlinkSync('.', join(d, 'self'))
  // A hard link is the same file under another name.
  linkSync(join(d, 'a.txt'), join(d, 'c.txt'))
  const b = bag.readText(join(d, '**', '*.txt'), { includePath: true })
  const got = (await client.compute(b)) as [string, string][]
  t.deepEqual(got.map(([l]) => l).sort(), ['a1', 'a2', 'b1', 'b2'])
  t.deepEqual([...new Set(got.map(([, p]) => p))], [join(d, 'a.txt'), join(d, 'b.txt')])
  t.is(await client.compute(bag.readCsv(join(d, '**', '*.txt')).count()), 2)
})

/** Writes `data` over `path` as another file (or in place) with the planned file's mtime put back. */
function replaceKeepingMtime(path: string, data: Buffer | string, inPlace: boolean): void {
  const { atimeMs, mtimeMs } = statSync(path)
  const target = inPlace ? path : `${path}.new`
  writeFileSync(target, data)
  utimesSync(target, atimeMs / 1000, mtimeMs / 1000)
  if (!inPlace) renameSync(target, path)
}

for (const gz of [false, true]) {
  for (const inPlace of [false, true]) {
    const how = inPlace ? 'rewritten in place' : 'replaced by another file'
    test.serial(`readText: a ${gz ? 'gzip' : 'plain'} file ${how} after planning, same size and mtime, is refused`, async (t) => {
      const d = scratch(`changed-${gz}-${inPlace}`)
      const f = join(d, gz ? 'x.txt.gz' : 'x.txt')
      const body = (c: string) => (gz ? gzipSync(Array.from({ length: 100 }, (_, i) => `${c}-${i}`).join('\n')) : Buffer.from(`${c}-line\n`.repeat(100)))
      const [before, after] = [body('aaa'), body('bbb')]
      t.is(before.length, after.length)
      writeFileSync(f, before)
      const b = bag.readText(f)
      t.is(await client.compute(b.count()), 100)
      // The first count's tasks forgotten (so the second runs, and reads), and a clock tick passed since the write planned.
      await until(() => client.scheduler.tasks.size === 0, 20_000, 'the first count forgotten')
      await new Promise((r) => setTimeout(r, 20))
      replaceKeepingMtime(f, after, inPlace)
      t.is(statSync(f).size, before.length)
      const err = await t.throwsAsync(client.compute(b.count()), { code: 'ERR_SPILLWAY_READ' })
      t.regex(err!.message, new RegExp(`file ${f.replace(/[.*]/g, '\\$&')} changed after the bag was planned \\(${inPlace ? 'ctime changed' : 'inode \\d+ → \\d+'}.*build the bag again`))
      t.is(await client.compute(bag.readText(f).count()), 100)
    })
  }
}

test.serial('a file replaced by a FIFO after planning: a coded error in bounded time, and the worker goes on', async (t) => {
  t.timeout(60_000)
  const d = scratch('fifo')
  const names = ['t.txt', 'c.csv', 'p.txt.gz']
  writeFileSync(join(d, 't.txt'), 'one\ntwo\n')
  writeFileSync(join(d, 'c.csv'), 'a,b\n1,2\n')
  writeFileSync(join(d, 'p.txt.gz'), gzipSync('one\ntwo\n'))
  const bags = [bag.readText(join(d, 't.txt')), bag.readCsv(join(d, 'c.csv')), bag.readText(join(d, 'p.txt.gz'))]
  for (const n of names) {
    rmSync(join(d, n))
    execFileSync('mkfifo', [join(d, n)])
  }
  for (const [i, b] of bags.entries()) {
    const err = await t.throwsAsync(client.compute(b.count()), { code: 'ERR_SPILLWAY_READ' })
    t.regex(err!.message, new RegExp(`file ${join(d, names[i]).replace(/[.*]/g, '\\$&')} is a FIFO now, not the regular file planned: build the bag again`))
  }
  // Both workers' thread pools are free: many reads at once still run.
  const ok = join(d, 'ok.txt')
  writeFileSync(ok, Array.from({ length: 64 }, (_, i) => `l${i}`).join('\n'))
  t.is(await client.compute(bag.readText(ok, { blocksize: 16 }).count()), 64)
  t.throws(() => bag.readText(join(d, 't.txt')), { code: 'ERR_SPILLWAY_READ', message: /is not a file/ })
})

for (const [format, ext] of [['gzip', 'gz'], ['zstd', 'zst'], ['lz4', 'lz4']] as const) {
  test.serial(`a ${format} bomb is streamed, and kept whole it is stopped as it passes 40% of the worker memory limit, naming the file and the figures`, async (t) => {
    t.timeout(120_000)
    const { compressFile } = await import('../src/native/file-codecs')
    const d = scratch(`bomb-${format}`)
    const f = join(d, `bomb.txt.${ext}`)
    // Members (gzip) or frames (zstd, lz4) concatenated are one stream: 1 GiB of text from a few megabytes at most.
    const member = format === 'gzip' ? gzipSync(Buffer.alloc(8 * 2 ** 20, 'a\n'), { level: 9 }) : await compressFile(Buffer.alloc(8 * 2 ** 20, 'a\n'), format)
    writeFileSync(f, Buffer.concat(Array.from({ length: 128 }, () => member)))
    // Its lines are made a block at a time: only the task's result, the lines kept whole, could outgrow the worker.
    const err = await t.throwsAsync(client.compute(bag.readText(f)), { code: 'ERR_SPILLWAY_TOO_LARGE' })
    t.regex(err!.message, new RegExp(`file ${f.replace(/[.*]/g, '\\$&')} \\(${format}\\) is streamed a block at a time, but this task keeps its items whole \\(the bag's items are its result, not a reduction's\\): \\d+ items from its first \\d+ decompressed bytes already take about \\d+ MiB \\(the worker's process \\d+ MiB\\), past what this worker's \\d+ MiB limit allows \\(40% for the items, 80% for the process\\)`))
    t.regex(err!.message, /reduce them \(count, frequencies, foldBy, reduction\), write them \(toTextfiles\) or give workers more memory/)
    t.is(await client.compute(bag.fromSequence(['x', 'y']).count()), 2)
  })
}

test.serial('zstd and lz4: decompressBounded holds at exactly its limit and refuses a byte past it; frames one after another are one file', async (t) => {
  const { compressFile, decompressBounded, decompressFile } = await import('../src/native/file-codecs')
  const text = Buffer.from(Array.from({ length: 50_000 }, (_, i) => `line ${i}`).join('\n'))
  for (const format of ['zstd', 'lz4'] as const) {
    const packed = await compressFile(text, format)
    t.true((await decompressBounded(packed, format, text.length)).equals(text), format)
    t.true((await decompressBounded(packed, format, Infinity)).equals(text), format)
    t.true((await decompressFile(packed, format)).equals(text), format)
    const err = await t.throwsAsync(decompressBounded(packed, format, text.length - 1), { code: 'ERR_SPILLWAY_TOO_LARGE' })
    t.is(err!.message, `${format} content passes ${text.length - 1} bytes: decoding stopped there, before inflating the rest`)
    // As the lz4 and zstd tools write and read them: every frame's lines, in order.
    const d = scratch(`frames-${format}`)
    const f = join(d, `three.txt.${format === 'zstd' ? 'zst' : 'lz4'}`)
    writeFileSync(f, Buffer.concat([await compressFile(Buffer.from('a\nb\n'), format), await compressFile(Buffer.alloc(0), format), await compressFile(Buffer.from('c\n'), format)]))
    t.deepEqual(await client.compute(bag.readText(f)), ['a', 'b', 'c'])
  }
})

/** Seeded random numbers (mulberry32): the same data on every run. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let x = Math.imul(seed ^ (seed >>> 15), seed | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

test.serial('readText utf16le in blocks of any size: every line exact, delimiters straddling code units never cut', async (t) => {
  const d = scratch('utf16')
  const rand = rng(16)
  // U+0A41 then U+0100 hold the bytes 41 0a 00 01: '\n' (0a 00) across two code units.
  const alphabet = ['a', 'é', '\u0a41', '\u0100', '€', '😀', ' ', '\u0a0a']
  const lines = Array.from({ length: 20_000 }, () => Array.from({ length: Math.floor(rand() * 12) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join(''))
  const f = join(d, 'u16.txt')
  writeFileSync(f, Buffer.from(lines.join('\n') + '\n', 'utf16le'))
  for (const blocksize of [999, 4096, 12_345]) {
    const b = bag.readText(f, { encoding: 'utf16le', blocksize })
    t.true(b.npartitions > 10)
    t.deepEqual(await client.compute(b), lines, `blocksize ${blocksize}`)
  }
  const crlf = join(d, 'u16-crlf.txt')
  writeFileSync(crlf, Buffer.from(lines.join('\r\n') + '\r\n', 'utf16le'))
  t.deepEqual(await client.compute(bag.readText(crlf, { encoding: 'utf16le', blocksize: 777, lineDelimiter: '\r\n' })), lines)
  t.throws(() => bag.readText(f, { encoding: 'hex' }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.encoding: got "hex"; allowed: a text encoding/ })
})

test.serial("invalid UTF-8 fails naming the file and the byte offset; errors: 'replace' reads U+FFFD", async (t) => {
  const d = scratch('utf8')
  const good = Array.from({ length: 300 }, (_, i) => `línea ${i}`)
  const before = Buffer.from(good.slice(0, 200).join('\n') + '\nbad ', 'utf8')
  const data = Buffer.concat([before, Buffer.from([0xc3, 0x28]), Buffer.from(' here\n' + good.slice(200).join('\n') + '\n', 'utf8')])
  const f = join(d, 'bad.txt')
  writeFileSync(f, data)
  const rx = (file: string, offset: number, suffix = '') => new RegExp(`file ${file.replace(/[.*]/g, '\\$&')} is not valid UTF-8 at byte ${offset} \\(0xc3 0x28 0x20 0x68\\)${suffix}: pass the file's own encoding .*errors: 'replace'`)
  for (const blocksize of [100, 1 << 20]) {
    const err = await t.throwsAsync(client.compute(bag.readText(f, { blocksize }).count()), { code: 'ERR_SPILLWAY_DECODE' })
    t.regex(err!.message, rx(f, before.length))
  }
  const replaced = (await client.compute(bag.readText(f, { blocksize: 100, errors: 'replace' }))) as string[]
  t.is(replaced.length, 301)
  t.is(replaced[200], 'bad \ufffd( here')
  const gz = join(d, 'bad.txt.gz')
  writeFileSync(gz, gzipSync(data))
  const gzErr = await t.throwsAsync(client.compute(bag.readText(gz).count()), { code: 'ERR_SPILLWAY_DECODE' })
  t.regex(gzErr!.message, rx(gz, before.length, ' of its gzip-decompressed content'))
  const csv = join(d, 'bad.csv')
  const csvBefore = Buffer.from(['name,n', ...good.slice(0, 200).map((l, i) => `${l},${i}`)].join('\n') + '\nbad ', 'utf8')
  writeFileSync(csv, Buffer.concat([csvBefore, Buffer.from([0xc3, 0x28]), Buffer.from(',1\n')]))
  const csvErr = await t.throwsAsync(client.compute(bag.readCsv(csv, { blocksize: 64 }).count()), { code: 'ERR_SPILLWAY_DECODE' })
  t.regex(csvErr!.message, new RegExp(`file ${csv.replace(/[.*]/g, '\\$&')} is not valid UTF-8 at byte ${csvBefore.length} \\(0xc3 0x28 0x2c 0x31\\)`))
  const csvReplaced = (await client.compute(bag.readCsv(csv, { blocksize: 64, errors: 'replace' }))) as Record<string, string>[]
  t.deepEqual(csvReplaced[200], { name: 'bad \ufffd(', n: '1' })
  t.throws(() => bag.readText(f, { errors: 'ignore' as never }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.errors: got "ignore"; allowed: 'strict'/ })
})

test('firstInvalidUtf8 agrees with Node: -1 exactly on valid UTF-8, else the longest valid prefix ends there (seeded random bytes)', async (t) => {
  const { firstInvalidUtf8 } = await import('../src/worker/collections/bag/text-decode')
  const { isUtf8 } = await import('node:buffer')
  const rand = rng(8)
  const pieces = [[0x61], [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xe0, 0x80, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80], [0xff], [0xc3], [0xf0, 0x9f]]
  for (let n = 0; n < 3000; n++) {
    const bytes = Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 8) }, () => pieces[Math.floor(rand() * pieces.length)]).flat())
    const i = firstInvalidUtf8(bytes)
    t.is(i === -1, isUtf8(bytes), bytes.toString('hex'))
    if (i !== -1) {
      t.true(isUtf8(bytes.subarray(0, i)), bytes.toString('hex'))
      // No valid character starts at i: a longer valid prefix would end past it.
      for (let k = i + 1; k <= Math.min(bytes.length, i + 4); k++) t.false(isUtf8(bytes.subarray(0, k)), `${bytes.toString('hex')} ${k}`)
    }
  }
})

test.serial('readCsv: a header with a quoted newline is read right, in blocks too', async (t) => {
  const d = scratch('csv-header')
  const f = join(d, 'h.csv')
  const rows = Array.from({ length: 200 }, (_, i) => `${i},"v ${i}"`)
  writeFileSync(f, `id,"long\nname"\n${rows.join('\n')}\n`)
  for (const blocksize of [10, 64, 1 << 20]) {
    const got = (await client.compute(bag.readCsv(f, { blocksize }))) as Record<string, string>[]
    t.is(got.length, 200, `blocksize ${blocksize}`)
    t.deepEqual(got[123], { id: '123', 'long\nname': 'v 123' })
  }
  writeFileSync(join(d, 'open.csv'), 'id,"never closed\n1,2\n')
  t.throws(() => bag.readCsv(join(d, 'open.csv')), { code: 'ERR_SPILLWAY_READ', message: /open\.csv's header \(its first record\) is not valid CSV: Quote Not Closed/ })
})

test.serial('readParquet keeps decimal(38,10) and micro/nanosecond timestamps exact, as strings', async (t) => {
  const { parquetWriteFile } = await import('hyparquet-writer')
  const d = scratch('parquet-exact')
  const f = join(d, 'exact.parquet')
  parquetWriteFile({
    filename: f,
    columnData: [
      { name: 'id', data: [0, 1, 2] },
      { name: 'big', data: [12345678901234567890123456789n, -1n, null] },
      { name: 'small', data: [1250n, -5n, 0n] },
      { name: 'ts', data: [1700000000123456n, -1n, 0n] },
      { name: 'tsn', data: [1700000000123456789n, 5n, -1n] },
    ],
    schema: [
      { name: 'root', num_children: 5 },
      { name: 'id', type: 'INT32', repetition_type: 'REQUIRED' },
      { name: 'big', type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, converted_type: 'DECIMAL', precision: 38, scale: 10, repetition_type: 'OPTIONAL' },
      { name: 'small', type: 'INT32', converted_type: 'DECIMAL', precision: 9, scale: 2, repetition_type: 'REQUIRED' },
      { name: 'ts', type: 'INT64', converted_type: 'TIMESTAMP_MICROS', repetition_type: 'REQUIRED' },
      { name: 'tsn', type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' }, repetition_type: 'REQUIRED' },
    ],
    rowGroupSize: 2,
  })
  const b = bag.readParquet(f)
  t.is(b.npartitions, 2)
  t.deepEqual(await client.compute(b), [
    { id: 0, big: '1234567890123456789.0123456789', small: '12.50', ts: '2023-11-14T22:13:20.123456Z', tsn: '2023-11-14T22:13:20.123456789' },
    { id: 1, big: '-0.0000000001', small: '-0.05', ts: '1969-12-31T23:59:59.999999Z', tsn: '1970-01-01T00:00:00.000000005' },
    { id: 2, big: null, small: '0.00', ts: '1970-01-01T00:00:00.000000Z', tsn: '1969-12-31T23:59:59.999999999' },
  ])
  t.deepEqual(await client.compute(bag.readParquet(f, { columns: ['big'] }).pluck('big')), ['1234567890123456789.0123456789', '-0.0000000001', null])
})

test.serial('readParquet reads a gzip column beside an uncompressed one, and refuses a decimal it could only round', async (t) => {
  const { parquetWriteFile } = await import('hyparquet-writer')
  const d = scratch('parquet-refused')
  const gz = join(d, 'gzip.parquet')
  parquetWriteFile({ filename: gz, columnData: [{ name: 'a', data: [1, 2], type: 'INT32' }, { name: 'b', data: [3, 4], type: 'INT32', codec: 'UNCOMPRESSED' }], codec: 'GZIP', compressors: { GZIP: (bytes: Uint8Array) => gzipSync(bytes) } })
  t.deepEqual(await client.compute(bag.readParquet(gz)), [{ a: 1, b: 3 }, { a: 2, b: 4 }])
  const ba = join(d, 'byte-array-decimal.parquet')
  parquetWriteFile({
    filename: ba,
    columnData: [{ name: 'n', data: [1n] }, { name: 'k', data: [7] }],
    schema: [{ name: 'root', num_children: 2 }, { name: 'n', type: 'BYTE_ARRAY', converted_type: 'DECIMAL', precision: 30, scale: 2, repetition_type: 'REQUIRED' }, { name: 'k', type: 'INT32', repetition_type: 'REQUIRED' }],
  })
  t.throws(() => bag.readParquet(ba), { code: 'ERR_SPILLWAY_READ', message: /column "n" is a DECIMAL stored as BYTE_ARRAY, which spillway's Parquet reader could only give rounded: leave it out with columns/ })
  t.deepEqual(await client.compute(bag.readParquet(ba, { columns: ['k'] })), [{ k: 7 }])
})
