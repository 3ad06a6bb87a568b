// Many small files packed into partitions (read in one call to the core,
// lines found there) and large files in blocks: every line exact against
// plain JavaScript on the same files, whatever the mix of empty files,
// files without a final newline, CRLF and multi-byte UTF-8; and a packed
// file that is gone, changed or not valid UTF-8 named in a coded error.
import test from 'ava'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-small-files-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

// mulberry32: the same files every run.
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), a | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const PIECES = ['a', 'line', ' ', 'é', 'ü', '日本語', '😀', '€', '\r', 'static int x;', '', 'x'.repeat(40)]

/** A file's text: lines of random pieces, CRLF or LF, a final delimiter or not, sometimes empty. */
function fileText(rand: () => number, big: boolean): string {
  if (!big && rand() < 0.1) return ''
  const crlf = rand() < 0.3
  const n = big ? 3000 : Math.floor(rand() * 40)
  const lines: string[] = []
  for (let i = 0; i < n; i++) {
    let l = ''
    for (let k = Math.floor(rand() * 8); k > 0; k--) l += PIECES[Math.floor(rand() * PIECES.length)]
    lines.push(l)
  }
  const eol = crlf ? '\r\n' : '\n'
  return lines.join(eol) + (rand() < 0.5 ? eol : '')
}

/** What plain JS reads: each file decoded, split at the delimiter, a final empty line dropped. */
function plainLines(files: string[], delimiter: string, withPath = false): unknown[] {
  return files.flatMap((f) => {
    const lines = readFileSync(f, 'utf8').split(delimiter)
    if (lines[lines.length - 1] === '') lines.pop()
    return withPath ? lines.map((l) => [l, f]) : lines
  })
}

function corpus(name: string, seed: number, count: number, bigEvery = 0): string[] {
  const d = join(dir, name)
  mkdirSync(d)
  const rand = rng(seed)
  const files: string[] = []
  for (let i = 0; i < count; i++) {
    const f = join(d, `f${String(i).padStart(4, '0')}.txt`)
    writeFileSync(f, fileText(rand, bigEvery > 0 && i % bigEvery === bigEvery - 1))
    files.push(f)
  }
  return files
}

test.serial('packed small files and large files in blocks: every line exact against plain JS, with and without paths', async (t) => {
  t.timeout(120_000)
  const files = corpus('mix', 33, 300, 60)
  const glob = join(dir, 'mix', '*.txt')
  t.true(files.filter((f) => statSync(f).size === 0).length > 5, 'the mix holds empty files')
  for (const blocksize of [64, 4096, 1 << 20]) {
    for (const delimiter of ['\n', '\r\n']) {
      const b = bag.readText(glob, { blocksize, lineDelimiter: delimiter })
      if (blocksize === 4096) t.true(b.npartitions < files.length / 2, 'small files share partitions')
      t.deepEqual(await client.compute(b), plainLines(files, delimiter), `blocksize ${blocksize}, delimiter ${JSON.stringify(delimiter)}`)
    }
    t.deepEqual(await client.compute(bag.readText(glob, { blocksize, includePath: true })), plainLines(files, '\n', true), `includePath, blocksize ${blocksize}`)
  }
})

test.serial('a packed partition in latin1, and invalid UTF-8 with errors: replace, read as plain JS reads them', async (t) => {
  const d = join(dir, 'enc')
  mkdirSync(d)
  const bodies = [Buffer.from('caf\xe9\nna\xefve\n', 'latin1'), Buffer.from('ok\n'), Buffer.from([0x61, 0xc3, 0x28, 0x0a, 0x62])]
  bodies.forEach((b, i) => writeFileSync(join(d, `e${i}.txt`), b))
  const files = readdirSync(d).sort().map((n) => join(d, n))
  const latin1 = files.flatMap((f) => readFileSync(f, 'latin1').split('\n').filter((l, i, a) => !(i === a.length - 1 && l === '')))
  t.deepEqual(await client.compute(bag.readText(join(d, '*.txt'), { encoding: 'latin1' })), latin1)
  t.deepEqual(await client.compute(bag.readText(join(d, '*.txt'), { errors: 'replace' })), plainLines(files, '\n'))
  const err = await t.throwsAsync(client.compute(bag.readText(join(d, '*.txt')).count()), { code: 'ERR_SPILLWAY_DECODE' })
  t.regex(err!.message, new RegExp(`file ${files[0].replace(/[.*]/g, '\\$&')} is not valid UTF-8 at byte 3 \\(0xe9 0x0a 0x6e 0x61\\)`))
})

test.serial('a packed file gone or changed after planning, in a later batch of its partition: a coded error naming it, the others untouched', async (t) => {
  t.timeout(120_000)
  // 40 files of 150 kB: one partition, read by the core in more than one batch (4 MiB each).
  const d = join(dir, 'gone')
  mkdirSync(d)
  const files = Array.from({ length: 40 }, (_, i) => join(d, `g${String(i).padStart(2, '0')}.txt`))
  files.forEach((f, i) => writeFileSync(f, `${'é'.repeat(49)}${i}\n`.repeat(1500)))
  const glob = join(d, '*.txt')
  const b = bag.readText(glob)
  t.is(b.npartitions, 1)
  t.is(await client.compute(b.count()), 40 * 1500)
  const victim = files[35]
  const { atimeMs, mtimeMs } = statSync(victim)
  writeFileSync(victim, 'another body\n')
  utimesSync(victim, atimeMs / 1000, mtimeMs / 1000)
  const changed = await t.throwsAsync(client.compute(b.count()), { code: 'ERR_SPILLWAY_READ' })
  t.regex(changed!.message, new RegExp(`file ${victim.replace(/[.*]/g, '\\$&')} changed after the bag was planned \\(size \\d+ → 13.*build the bag again`))
  const b2 = bag.readText(glob)
  rmSync(victim)
  const gone = await t.throwsAsync(client.compute(b2.count()), { code: 'ERR_SPILLWAY_READ' })
  t.regex(gone!.message, new RegExp(`file ${victim.replace(/[.*]/g, '\\$&')} could not be read: ENOENT: no such file or directory, open`, 'i'))
  t.deepEqual(await client.compute(bag.readText(glob)), plainLines(files.filter((f) => f !== victim), '\n'))
})
