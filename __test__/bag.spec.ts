import test from 'ava'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { bag, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'
import { textItems } from '../src/worker/collections/bag/text-blocks'

const dir = mkdtempSync(join(tmpdir(), 'spillway-bag-'))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

async function linesOf(b: bag.Bag<string>): Promise<unknown[]> {
  const out: unknown[] = []
  for (const p of b.parts) {
    if (p.source.kind !== 'text') throw new Error('not a text partition')
    for await (const l of textItems(p.source)) out.push(l)
  }
  return out
}

test('readText blocks: every line read exactly once, for every block size and delimiters at every boundary', async (t) => {
  // Lines of lengths 0..6 so delimiters fall on every offset; a last line without a delimiter.
  const lines = ['', 'a', 'bb', 'ccc', '', 'dddd', 'eeeee', 'ffffff', 'g', '', 'hh', 'tail']
  const text = lines.join('\n')
  const file = join(dir, 'blocks.txt')
  writeFileSync(file, text)
  for (let bs = 1; bs <= text.length + 1; bs++) {
    const b = bag.readText(file, { blocksize: bs })
    t.deepEqual(await linesOf(b), lines, `blocksize ${bs}`)
  }
  // A multi-byte delimiter split across block ends and scan reads.
  const crlf = join(dir, 'crlf.txt')
  writeFileSync(crlf, lines.join('\r\n') + '\r\n')
  for (let bs = 1; bs <= 12; bs++) t.deepEqual(await linesOf(bag.readText(crlf, { blocksize: bs, lineDelimiter: '\r\n' })), lines, `crlf blocksize ${bs}`)
})

test('readText blocks over 1 MiB, split a piece at a time: the same lines as a plain split (multi-byte characters, CRLF)', async (t) => {
  const lines = Array.from({ length: 60_000 }, (_, i) => (i % 97 === 0 ? '' : `ligne ${i} é€😀 `.repeat(1 + (i % 5))))
  for (const [name, delim] of [['big.txt', '\n'], ['big-crlf.txt', '\r\n']]) {
    const file = join(dir, name)
    writeFileSync(file, lines.join(delim) + delim)
    for (const bs of [3 * 2 ** 20, 2 ** 20 + 3, 64 * 2 ** 20]) t.deepEqual(await linesOf(bag.readText(file, { blocksize: bs, lineDelimiter: delim })), lines, `${name} blocksize ${bs}`)
  }
})

test('readText packs small files up to blocksize, reads gzip whole, includePath', async (t) => {
  const sub = join(dir, 'small')
  rmSync(sub, { recursive: true, force: true })
  require('node:fs').mkdirSync(sub)
  for (let i = 0; i < 10; i++) writeFileSync(join(sub, `f${i}.log`), `line ${i}a\nline ${i}b\n`)
  const b = bag.readText(join(sub, '*.log'), { blocksize: 40 })
  // 16 bytes a file: two per partition.
  t.is(b.npartitions, 5)
  t.is((await linesOf(b)).length, 20)
  writeFileSync(join(sub, 'z.log.gz'), gzipSync('zipped 1\nzipped 2\n'))
  const z = bag.readText(join(sub, '*.gz'), { includePath: true })
  t.deepEqual(await linesOf(z), [['zipped 1', join(sub, 'z.log.gz')], ['zipped 2', join(sub, 'z.log.gz')]])
  // zstd and LZ4 frame files, as the zstd and lz4 tools write them, each one partition.
  const { compressFile } = await import('../src/native/file-codecs')
  writeFileSync(join(sub, 'y.log.zst'), await compressFile(Buffer.from('zstd 1\nzstd 2\n'), 'zstd'))
  writeFileSync(join(sub, 'x.log.lz4'), await compressFile(Buffer.from('lz4 1\nlz4 2\nlz4 3'), 'lz4'))
  const zl = bag.readText([join(sub, 'y.log.zst'), join(sub, 'x.log.lz4')], { blocksize: 4 })
  t.is(zl.npartitions, 2)
  t.deepEqual(await linesOf(zl), ['zstd 1', 'zstd 2', 'lz4 1', 'lz4 2', 'lz4 3'])
  writeFileSync(join(sub, 'bad.zst'), 'not zstd at all')
  await t.throwsAsync(linesOf(bag.readText(join(sub, 'bad.zst'))), { code: 'ERR_SPILLWAY_READ', message: /bad\.zst is not valid zstd/ })
})

test('bad inputs are coded errors naming them', (t) => {
  t.throws(() => bag.readText(join(dir, 'nothing-*.txt')), { code: 'ERR_SPILLWAY_NO_FILES', message: /nothing-\*\.txt/ })
  t.throws(() => bag.readText(join(dir, 'missing.txt')), { code: 'ERR_SPILLWAY_READ', message: /missing\.txt/ })
  t.throws(() => bag.readText(join(dir, 'blocks.txt'), { blocksize: 'lots' }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /blocksize/ })
  t.throws(() => bag.readText(join(dir, 'blocks.txt'), { encoding: 'klingon' as never }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /encoding/ })
  t.throws(() => bag.fromSequence([1]).map(42 as never), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /map\(fn\)/ })
  t.throws(() => bag.fromSequence([1]).map(Math.max), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /native/ })
})

let client!: Client
sharedCluster(test, (c) => (client = c))

function logFiles(): { glob: string; lines: string[] } {
  const sub = join(dir, 'logs')
  require('node:fs').mkdirSync(sub, { recursive: true })
  const lines: string[] = []
  const users = ['ann', 'bob', 'cy', 'dee', '__proto__']
  for (let f = 0; f < 6; f++) {
    const mine: string[] = []
    for (let i = 0; i < 400 + f * 37; i++) {
      const level = i % 7 === 0 ? 'ERROR' : 'INFO'
      mine.push(JSON.stringify({ level, user: users[(i * 3 + f) % users.length], bytes: (i * 13 + f) % 1000 }))
    }
    writeFileSync(join(sub, `part-${f}.ndjson`), mine.join('\n') + '\n')
    lines.push(...mine)
  }
  return { glob: join(sub, '*.ndjson'), lines }
}

test.serial('a log pipeline on the cluster: readText, map(JSON.parse), filter, reductions, against plain JavaScript', async (t) => {
  const { glob, lines } = logFiles()
  const events = bag.readText(glob, { blocksize: 4096 }).map(JSON.parse)
  const plain = lines.map((l) => JSON.parse(l))
  const errors = events.filter((e: any) => e.level === 'ERROR')
  t.true(events.npartitions > 6, 'large files are cut into blocks')
  t.is(await client.compute(errors.count()), plain.filter((e) => e.level === 'ERROR').length)
  t.is(await client.compute(events.pluck('bytes').sum()), plain.reduce((a, e) => a + e.bytes, 0))
  t.is(await client.compute(events.pluck('bytes').max()), Math.max(...plain.map((e) => e.bytes)))
  t.is(await client.compute(events.pluck('bytes').min()), Math.min(...plain.map((e) => e.bytes)))
  const xs = plain.map((e) => e.bytes)
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length
  t.true(Math.abs((await client.compute(events.pluck('bytes').mean())) - mean) < 1e-9)
  t.true(Math.abs((await client.compute(events.pluck('bytes').var())) - variance) < 1e-6)
  t.true(Math.abs((await client.compute(events.pluck('bytes').std({ ddof: 1 }))) - Math.sqrt((variance * xs.length) / (xs.length - 1))) < 1e-9)

  const freq = new Map<string, number>()
  for (const e of plain) freq.set(e.user, (freq.get(e.user) ?? 0) + 1)
  const got = await client.compute(events.pluck('user').frequencies({ splitEvery: 2 }))
  t.deepEqual(new Map(got as [string, number][]), freq)
  t.deepEqual((await client.compute(events.pluck('user').distinct())).sort(), [...freq.keys()].sort())

  const byUser = new Map<string, number>()
  for (const e of plain) byUser.set(e.user, (byUser.get(e.user) ?? 0) + e.bytes)
  const folded = await client.compute(events.foldBy('user', (acc: number, e: any) => acc + e.bytes, 0, { combine: (a: number, b: number) => a + b }))
  t.deepEqual(new Map(folded as [string, number][]), byUser)

  const top = await client.compute(events.pluck('user').frequencies().topk(2, (kv: [string, number]) => kv[1]))
  t.deepEqual(top, [...freq].sort((a, b) => b[1] - a[1]).slice(0, 2))

  const custom = await client.compute(events.reduction((items: Iterable<any>) => { let n = 0; for (const e of items) n += e.level === 'INFO' ? 1 : 0; return n }, (ns: number[]) => ns.reduce((a, b) => a + b, 0)))
  t.is(custom, plain.filter((e) => e.level === 'INFO').length)
})

test.serial('compute(bag) gives every item in order; steps are fused into one task per partition; take reads only what it needs', async (t) => {
  const items = Array.from({ length: 1000 }, (_, i) => i)
  const b = bag.fromSequence(items, { npartitions: 10 })
  const chain = b.map((x: number) => x * 2).filter((x: number) => x % 3 === 0).flatMap((x: number) => [x, -x]).map((x: number, k: number) => x + k, 1)
  const expected = items.map((x) => x * 2).filter((x) => x % 3 === 0).flatMap((x) => [x, -x]).map((x) => x + 1)
  const before = client.scheduler.totalTasks
  t.deepEqual(await client.compute(chain), expected)
  t.is(client.scheduler.totalTasks - before, 10, 'one task per partition for a chain of four steps')
  t.deepEqual(await client.compute(chain), expected, 'the same bag again is the same graph')
  const before2 = client.scheduler.totalTasks
  t.deepEqual(await client.compute(chain.take(5)), expected.slice(0, 5))
  t.is(client.scheduler.totalTasks - before2, 1, 'take(5) ran only the first partition')
  t.deepEqual(await client.compute(b.mapPartitions((xs: Iterable<number>) => [[...xs].length])), Array(10).fill(100))
  t.deepEqual(await client.compute(b.repartition(3).mapPartitions((xs: Iterable<number>) => [[...xs].length])), [400, 400, 200])
  t.deepEqual(await client.compute(b.concat(bag.fromSequence([-1, -2], { npartitions: 1 })).count()), 1002)
  t.deepEqual(await client.compute(bag.fromSequence([{ a: 1 }, { a: 2 }]).pluck('a')), [1, 2])
})

test.serial('a Future as an extra argument of a step; errors in a step reject with the task error', async (t) => {
  const offset = await client.scatter(100)
  t.deepEqual(await client.compute(bag.fromSequence([1, 2, 3]).map((x: number, o: number) => x + o, offset)), [101, 102, 103])
  const err = await t.throwsAsync(client.compute(bag.fromSequence([1, 2, 3]).map((x: number) => { if (x === 2) throw new RangeError('two'); return x })))
  t.is((err as any).code, 'ERR_SPILLWAY_TASK')
  t.regex(err!.message, /two/)
})

test.serial('persist keeps the partitions on the workers; reductions over it do not read the files again', async (t) => {
  const { glob, lines } = logFiles()
  const events = bag.readText(glob, { blocksize: 8192 }).map(JSON.parse)
  const kept = await client.persist(events)
  t.is(await client.compute(kept.count()), lines.length)
  t.deepEqual((await client.compute(kept.pluck('bytes'))).length, lines.length)
  kept.release()
})

test.serial('a file that disappears after planning fails its partition with a coded error naming it', async (t) => {
  const f = join(dir, 'vanish.txt')
  writeFileSync(f, 'a\nb\n')
  const b = bag.readText(f)
  rmSync(f)
  const err = await t.throwsAsync(client.compute(b.count()))
  t.regex(err!.message, /vanish\.txt/)
  t.is((err as any).code, 'ERR_SPILLWAY_READ')
})
