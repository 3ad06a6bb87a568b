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

/** The cache directory for `size` ('quick' or 'default'), generated if its manifest is missing or stale. */
function ensureData(size, log = console.log) {
  const spec = SIZES[size]
  const dir = path.join(os.tmpdir(), `spillway-bench-bag-${size}`)
  const manifestPath = path.join(dir, 'manifest.json')
  try {
    const m = JSON.parse(fs.readFileSync(manifestPath, 'utf8'))
    if (m.version === VERSION && JSON.stringify(m.spec) === JSON.stringify(spec)) return m
  } catch {}
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

module.exports = { ensureData, SIZES }

if (require.main === module) ensureData(process.argv.includes('--quick') ? 'quick' : 'default')
