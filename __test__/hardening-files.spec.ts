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
import { sharedCluster } from './cluster-helpers'

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

test.serial('a gzip bomb is stopped past a quarter of the worker memory limit, naming the file and the figures', async (t) => {
  t.timeout(120_000)
  const d = scratch('bomb')
  const f = join(d, 'bomb.txt.gz')
  // Gzip members concatenated are one stream: 1 GiB of text from about a megabyte.
  const member = gzipSync(Buffer.alloc(8 * 2 ** 20, 'a\n'), { level: 9 })
  writeFileSync(f, Buffer.concat(Array.from({ length: 128 }, () => member)))
  const err = await t.throwsAsync(client.compute(bag.readText(f).count()), { code: 'ERR_SPILLWAY_TOO_LARGE' })
  t.regex(err!.message, new RegExp(`file ${f.replace(/[.*]/g, '\\$&')} decompresses \\(gzip, \\d+ bytes\\) to more than \\d+ bytes, past a quarter of this worker's memory limit \\(\\d+ of \\d+ bytes\\)`))
  t.regex(err!.message, /decompress it and read it with a blocksize/)
  t.is(await client.compute(bag.fromSequence(['x', 'y']).count()), 2)
})
