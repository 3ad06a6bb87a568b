// bench/bag's input files, generated once into a cache directory under the
// OS temp dir and reused while their manifest matches the size asked for:
//   text/small/NNNN/*.log   many small log files (20-200 KB each)
//   text/large/*.log        a few large ones (256 MiB each by default)
//   events.ndjson           one NDJSON file of request events
// The manifest holds what every side must answer (lines, ERROR lines, the
// sum of bytes per user), counted while writing.
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const MIB = 2 ** 20
const SIZES = {
  quick: { smallFiles: 1_000, largeFiles: 2, largeBytes: 100 * MIB, ndjsonBytes: 100 * MIB },
  default: { smallFiles: 10_000, largeFiles: 8, largeBytes: 256 * MIB, ndjsonBytes: 512 * MIB },
}
const VERSION = 1

// A small deterministic PRNG (mulberry32), so every run writes the same bytes.
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const LEVELS = ['INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'DEBUG', 'DEBUG', 'DEBUG', 'WARN', 'WARN', 'ERROR']

/** A pool of distinct log lines (with their level) to draw from: generating is then as fast as writing. */
function linePool(n, rand) {
  const pool = []
  for (let i = 0; i < n; i++) {
    const level = LEVELS[Math.floor(rand() * LEVELS.length)]
    const ts = new Date(1_714_000_000_000 + Math.floor(rand() * 3e9)).toISOString()
    const host = `host-${Math.floor(rand() * 64)}`
    const msg =
      level === 'ERROR'
        ? `request /api/v1/items/${Math.floor(rand() * 1e5)} failed: upstream timeout after ${Math.floor(rand() * 3000)} ms`
        : `request /api/v1/items/${Math.floor(rand() * 1e5)} took ${Math.floor(rand() * 300)} ms user=u${Math.floor(rand() * 1000)}`
    pool.push({ line: `${ts} ${host} app[${Math.floor(rand() * 30000)}]: ${level} ${msg}\n`, error: level === 'ERROR' })
  }
  return pool
}

/** Writes about `bytes` bytes of lines from the pool to `file`; returns its lines and ERROR lines. */
function writeLines(file, bytes, pool, rand) {
  const fd = fs.openSync(file, 'w')
  let written = 0
  let lines = 0
  let errors = 0
  const chunk = []
  let chunkBytes = 0
  while (written + chunkBytes < bytes) {
    const p = pool[Math.floor(rand() * pool.length)]
    chunk.push(p.line)
    chunkBytes += p.line.length
    lines++
    if (p.error) errors++
    if (chunkBytes >= 4 * MIB) {
      fs.writeSync(fd, chunk.join(''))
      written += chunkBytes
      chunk.length = 0
      chunkBytes = 0
    }
  }
  if (chunk.length) fs.writeSync(fd, chunk.join(''))
  written += chunkBytes
  fs.closeSync(fd)
  return { bytes: written, lines, errors }
}

function writeNdjson(file, bytes, rand) {
  const fd = fs.openSync(file, 'w')
  const perUser = new Map()
  let written = 0
  let lines = 0
  const paths = Array.from({ length: 200 }, (_, i) => `/api/v1/${['items', 'users', 'orders', 'search'][i % 4]}/${i * 37}`)
  const chunk = []
  let chunkBytes = 0
  let ts = 1_714_000_000_000
  while (written + chunkBytes < bytes) {
    const user = `u${String(Math.floor(rand() * 1000)).padStart(4, '0')}`
    const b = Math.floor(rand() * 100_000)
    ts += Math.floor(rand() * 50)
    const status = rand() < 0.05 ? 500 : 200
    const line = `{"ts":${ts},"user":"${user}","path":"${paths[Math.floor(rand() * paths.length)]}","status":${status},"bytes":${b},"ms":${(rand() * 300).toFixed(2)},"ok":${status === 200}}\n`
    perUser.set(user, (perUser.get(user) ?? 0) + b)
    chunk.push(line)
    chunkBytes += line.length
    lines++
    if (chunkBytes >= 4 * MIB) {
      fs.writeSync(fd, chunk.join(''))
      written += chunkBytes
      chunk.length = 0
      chunkBytes = 0
    }
  }
  if (chunk.length) fs.writeSync(fd, chunk.join(''))
  written += chunkBytes
  fs.closeSync(fd)
  let total = 0
  for (const v of perUser.values()) total += v
  return { bytes: written, lines, users: perUser.size, totalBytesField: total }
}

/** The manifest at `manifestPath` if it was written by this version for `spec`; else undefined (the data is stale or missing). */
function cachedManifest(manifestPath, spec) {
  try {
    const m = JSON.parse(fs.readFileSync(manifestPath, 'utf8'))
    if (m.version === VERSION && JSON.stringify(m.spec) === JSON.stringify(spec)) return m
  } catch {}
  return undefined
}

/** The cache directory for `size` ('quick' or 'default'), generated if its manifest is missing or stale. */
function ensureData(size, log = console.log) {
  const spec = SIZES[size]
  const dir = path.join(os.tmpdir(), `spillway-bench-bag-${size}`)
  const manifestPath = path.join(dir, 'manifest.json')
  const cached = cachedManifest(manifestPath, spec)
  if (cached) return cached
  fs.rmSync(dir, { recursive: true, force: true })
  const t0 = Date.now()
  log(`bench/bag: generating ${size} input files into ${dir} (once) …`)
  const rand = rng(22)
  const pool = linePool(4096, rand)
  const files = []
  let lines = 0
  let errors = 0
  for (let i = 0; i < spec.smallFiles; i++) {
    const sub = path.join(dir, 'text', 'small', String(Math.floor(i / 1000)).padStart(4, '0'))
    if (i % 1000 === 0) fs.mkdirSync(sub, { recursive: true })
    const f = path.join(sub, `app-${String(i).padStart(6, '0')}.log`)
    const r = writeLines(f, 20_000 + Math.floor(rand() * 180_000), pool, rand)
    files.push({ path: f, bytes: r.bytes, small: true })
    lines += r.lines
    errors += r.errors
  }
  fs.mkdirSync(path.join(dir, 'text', 'large'), { recursive: true })
  for (let i = 0; i < spec.largeFiles; i++) {
    const f = path.join(dir, 'text', 'large', `big-${i}.log`)
    const r = writeLines(f, spec.largeBytes, pool, rand)
    files.push({ path: f, bytes: r.bytes, small: false })
    lines += r.lines
    errors += r.errors
  }
  const ndjsonPath = path.join(dir, 'events.ndjson')
  const nd = writeNdjson(ndjsonPath, spec.ndjsonBytes, rand)
  const m = {
    version: VERSION,
    spec,
    dir,
    text: {
      glob: path.join(dir, 'text', '**', '*.log'),
      smallGlob: path.join(dir, 'text', 'small', '*', '*.log'),
      largeGlob: path.join(dir, 'text', 'large', '*.log'),
      files: files.length,
      smallFiles: spec.smallFiles,
      largeFiles: spec.largeFiles,
      bytes: files.reduce((a, f) => a + f.bytes, 0),
      smallBytes: files.filter((f) => f.small).reduce((a, f) => a + f.bytes, 0),
      lines,
      errors,
    },
    ndjson: { path: ndjsonPath, ...nd },
    seconds: (Date.now() - t0) / 1000,
  }
  // The file list, for the floor's processes (each takes half of the bytes).
  fs.writeFileSync(path.join(dir, 'files.json'), JSON.stringify(files))
  fs.writeFileSync(manifestPath, JSON.stringify(m, null, 2))
  log(`  ${files.length} text files (${(m.text.bytes / 2 ** 30).toFixed(2)} GiB, ${lines} lines) and ${(nd.bytes / 2 ** 30).toFixed(2)} GiB of NDJSON in ${m.seconds.toFixed(0)} s`)
  return m
}

// ---- many small files (the small-files case) --------------------------------------

/**
 * File sizes of a real source tree: percentile → bytes, measured on every
 * .c and .h file of the Linux 6.1 sources (55 405 files, 1.18 GB, mean
 * 21 245 bytes, 24 of them empty). A generated file's size is drawn from
 * it, log-linearly between neighbouring percentiles.
 */
const SOURCE_SIZES = [
  [0, 0], [5, 406], [10, 702], [15, 1067], [20, 1458], [25, 1888], [30, 2402], [35, 3015], [40, 3724], [45, 4545], [50, 5539],
  [55, 6678], [60, 8107], [65, 9823], [70, 12093], [75, 15021], [80, 19218], [85, 25455], [90, 35477], [95, 57509], [96, 66076],
  [97, 77603], [98, 97756], [99, 148552], [99.5, 238426], [99.8, 696066], [99.9, 1477430], [99.95, 4344749], [99.99, 12748346], [100, 23944620],
]

function sourceSize(rand) {
  const p = rand() * 100
  let k = 1
  while (SOURCE_SIZES[k][0] < p) k++
  const [p0, s0] = SOURCE_SIZES[k - 1]
  const [p1, s1] = SOURCE_SIZES[k]
  const f = (p - p0) / (p1 - p0)
  if (s0 === 0) return Math.floor(f * s1)
  return Math.floor(Math.exp(Math.log(s0) + f * (Math.log(s1) - Math.log(s0))))
}

const MATCH = /\bstatic\b/
const FILE_SIZES = { quick: { files: 10_000 }, default: { files: 50_000 } }

/** C-like lines (37 bytes on average, as the kernel's; about 2.4 % match MATCH, a few hold multi-byte UTF-8). */
function sourcePool(n, rand) {
  const words = ['int', 'struct', 'return', 'if', 'else', 'for', 'unsigned', 'long', 'const', 'void', 'char', 'u32', 'dev', 'ret', 'err', 'size', 'len', 'buf', 'priv', 'data', 'NULL', '->', '=', '==', '(', ')', '{', '}', ';', '0', '1', '&', '*', 'sizeof', 'goto', 'out', 'unlock', 'lock', 'spin_lock', 'kfree', 'kmalloc', 'GFP_KERNEL', 'EINVAL', 'pr_err', '"%s"', 'mutex', 'irq', 'reg', 'val', 'mask']
  const pool = []
  for (let i = 0; i < n; i++) {
    const r = rand()
    let line
    if (r < 0.12) line = ''
    else if (r < 0.144) line = `static ${words[Math.floor(rand() * 12)]} ${words[12 + Math.floor(rand() * 10)]}_${Math.floor(rand() * 1e4)}(${words[Math.floor(rand() * 12)]} *${words[12 + Math.floor(rand() * 10)]});`
    else if (r < 0.1445) line = ` * Copyright © ${2000 + Math.floor(rand() * 24)} Jürgen Müller-Ørsted <jm@example.org>`
    else if (r < 0.24) line = ` * ${Array.from({ length: 3 + Math.floor(rand() * 8) }, () => words[Math.floor(rand() * words.length)]).join(' ')}`
    else {
      const depth = Math.floor(rand() * 4)
      line = '\t'.repeat(depth) + Array.from({ length: 2 + Math.floor(rand() * 9) }, () => words[Math.floor(rand() * words.length)]).join(' ')
    }
    pool.push({ line: line + '\n', bytes: Buffer.byteLength(line) + 1, match: MATCH.test(line) })
  }
  return pool
}

/**
 * The small-files case's generated corpus: 50 000 files (10 000 with
 * --quick) of C-like lines whose sizes follow SOURCE_SIZES, in directories
 * of 500, a few without a final newline. Its manifest holds the answer
 * (lines, and lines matching /\bstatic\b/), counted while writing.
 */
function ensureSmallFiles(size, log = console.log) {
  const spec = FILE_SIZES[size]
  const dir = path.join(os.tmpdir(), `spillway-bench-bag-files-${size}`)
  const manifestPath = path.join(dir, 'manifest.json')
  const cached = cachedManifest(manifestPath, spec)
  if (cached) return cached
  fs.rmSync(dir, { recursive: true, force: true })
  const t0 = Date.now()
  log(`bench/bag: generating ${spec.files} small source files into ${dir} (once) …`)
  const rand = rng(33)
  const pool = sourcePool(8192, rand)
  const list = []
  let lines = 0
  let matches = 0
  let bytes = 0
  for (let i = 0; i < spec.files; i++) {
    const sub = path.join(dir, 'src', String(Math.floor(i / 500)).padStart(4, '0'))
    if (i % 500 === 0) fs.mkdirSync(sub, { recursive: true })
    const f = path.join(sub, `f${String(i).padStart(6, '0')}.${rand() < 0.6 ? 'c' : 'h'}`)
    const target = sourceSize(rand)
    const chunk = []
    let n = 0
    while (n < target) {
      const p = pool[Math.floor(rand() * pool.length)]
      chunk.push(p.line)
      n += p.bytes
      lines++
      if (p.match) matches++
    }
    let text = chunk.join('')
    if (text.length && rand() < 0.001) text = text.slice(0, -1)
    fs.writeFileSync(f, text)
    list.push({ path: f, bytes: Buffer.byteLength(text) })
    bytes += Buffer.byteLength(text)
  }
  const m = { version: VERSION, spec, dir, files: { glob: path.join(dir, 'src', '**', '*.{c,h}'), list: path.join(dir, 'files.json'), files: spec.files, bytes, lines, matches }, seconds: (Date.now() - t0) / 1000 }
  fs.writeFileSync(path.join(dir, 'files.json'), JSON.stringify(list))
  fs.writeFileSync(manifestPath, JSON.stringify(m, null, 2))
  log(`  ${spec.files} files, ${(bytes / 2 ** 20).toFixed(0)} MiB, ${lines} lines (${(bytes / spec.files).toFixed(0)} bytes a file) in ${m.seconds.toFixed(0)} s`)
  return m
}

/**
 * A real corpus for the small-files case: every .c and .h file under
 * `dir` (regular files only: a symlink would be one file counted twice by
 * the sides that do not dedupe). `dir` 'kernel' means the Linux sources
 * of Debian's linux-source package (apt-get install linux-source),
 * extracted once under the OS temp dir. The answer is the single Node
 * process's, taken by run.js in an untimed first pass.
 */
function corpusFiles(dir, log = console.log) {
  const into = path.join(os.tmpdir(), 'spillway-bench-bag-kernel')
  if (dir === 'kernel') {
    if (!fs.existsSync(path.join(into, '.extracted'))) {
      const tar = fs.existsSync('/usr/src') && fs.readdirSync('/usr/src').find((n) => /^linux-source-.*\.tar\.(xz|bz2|gz)$/.test(n))
      if (!tar) throw new Error('--corpus kernel needs the Linux sources: apt-get install linux-source (or pass --corpus DIR)')
      log(`bench/bag: extracting the .c and .h files of /usr/src/${tar} into ${into} (once) …`)
      fs.rmSync(into, { recursive: true, force: true })
      fs.mkdirSync(into, { recursive: true })
      require('node:child_process').execFileSync('tar', ['-xf', path.join('/usr/src', tar), '-C', into, '--wildcards', '*.c', '*.h'], { stdio: 'inherit' })
      fs.writeFileSync(path.join(into, '.extracted'), tar)
    }
  }
  // Symlinks are removed from our own extraction only; in a tree of the
  // user's they are left, and a side that reads them twice answers wrong.
  const ours = dir === 'kernel'
  if (ours) dir = into
  dir = path.resolve(dir)
  const list = []
  let links = 0
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isSymbolicLink() && /\.[ch]$/.test(e.name)) ours ? fs.rmSync(p) : links++
      else if (e.isFile() && /\.[ch]$/.test(e.name)) list.push({ path: p, bytes: fs.statSync(p).size })
    }
  }
  walk(dir)
  if (links) log(`bench/bag: ${dir} holds ${links} symlinked .c/.h files: the single process reads them twice, spillway once (its answer then differs)`)
  const listPath = path.join(os.tmpdir(), `spillway-bench-bag-corpus-${Buffer.from(dir).toString('base64url').slice(-40)}.json`)
  fs.writeFileSync(listPath, JSON.stringify(list))
  return { dir, files: { glob: path.join(dir, '**', '*.{c,h}'), list: listPath, files: list.length, bytes: list.reduce((a, f) => a + f.bytes, 0) } }
}

module.exports = { ensureData, ensureSmallFiles, corpusFiles, SIZES, SOURCE_SIZES }

if (require.main === module) ensureData(process.argv.includes('--quick') ? 'quick' : 'default')
