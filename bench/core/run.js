#!/usr/bin/env node
// bench/core: spillway's native core against the anchors of the issue, side
// by side in one run: the Node codec packages (lz4-napi, snappy, zstd-napi,
// node:zlib) on the same 32 MB buffers, numpy for generation and sums, and
// raw node:fs for spill I/O. Prints a table of ratios (>1 means spillway is
// faster) and the targets; `--json` prints the figures as JSON instead.
//
//   npm run bench:core            (or: node bench/core/run.js [--json] [--quick])
'use strict'

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { promisify } = require('node:util')

const spillway = require('../..')

const ROOT = path.resolve(__dirname, '..', '..')
const JSON_OUT = process.argv.includes('--json')
const QUICK = process.argv.includes('--quick')
// --only=codecs,compute,spill runs a subset (for iterating on one part).
const ONLY = (process.argv.find((a) => a.startsWith('--only=')) || '--only=codecs,compute,spill').slice(7).split(',')
const log = JSON_OUT ? (...a) => console.error(...a) : (...a) => console.log(...a)

const N = 4_000_000 // values per buffer: 32 MB of float64 or int64
const MB = 1e6

// ---- timing ---------------------------------------------------------------

/** Median seconds of `fn` (sync or async) after a warm-up, repeating until
 *  `minReps` runs and about `budget` seconds, at most `maxReps` runs. */
async function median(fn, { warmup = 1, minReps = QUICK ? 2 : 5, maxReps = QUICK ? 3 : 9, budget = QUICK ? 0.5 : 2 } = {}) {
  for (let i = 0; i < warmup; i++) await fn()
  const times = []
  const start = process.hrtime.bigint()
  while (times.length < maxReps) {
    const t = process.hrtime.bigint()
    await fn()
    times.push(Number(process.hrtime.bigint() - t) / 1e9)
    const spent = Number(process.hrtime.bigint() - start) / 1e9
    if (times.length >= minReps && spent > budget) break
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]
}

function tryRequire(name) {
  try {
    return require(name)
  } catch (e) {
    log(`  (peer ${name} unavailable: ${e.message.split('\n')[0]})`)
    return undefined
  }
}

// ---- peers ----------------------------------------------------------------

const lz4 = tryRequire('lz4-napi')
const snappy = tryRequire('snappy')
const zstd = tryRequire('zstd-napi')
const deflate = promisify(zlib.deflate)
const inflate = promisify(zlib.inflate)

/** Each peer variant: how it compresses and decompresses, async or sync. */
function peersFor(codec, level) {
  const p = []
  if (codec === 'lz4' && lz4) {
    p.push({ name: 'lz4-napi', mode: 'async', c: (b) => lz4.compress(b), d: (b) => lz4.uncompress(b) })
    p.push({ name: 'lz4-napi', mode: 'sync', c: (b) => lz4.compressSync(b), d: (b) => lz4.uncompressSync(b) })
  }
  if (codec === 'snappy' && snappy) {
    p.push({ name: 'snappy', mode: 'async', c: (b) => snappy.compress(b), d: (b) => snappy.uncompress(b, { asBuffer: true }) })
    p.push({ name: 'snappy', mode: 'sync', c: (b) => snappy.compressSync(b), d: (b) => snappy.uncompressSync(b, { asBuffer: true }) })
  }
  if (codec === 'zstd' && zstd) {
    // zstd-napi's one-shot API is synchronous only.
    p.push({ name: 'zstd-napi', mode: 'sync', c: (b) => zstd.compress(b, { compressionLevel: level }), d: (b) => zstd.decompress(b) })
  }
  if (codec === 'zlib') {
    p.push({ name: 'node:zlib', mode: 'async', c: (b) => deflate(b, { level }), d: (b) => inflate(b) })
    p.push({ name: 'node:zlib', mode: 'sync', c: (b) => zlib.deflateSync(b, { level }), d: (b) => zlib.inflateSync(b) })
  }
  return p
}

const CODECS = [
  ['lz4', undefined],
  ['snappy', undefined],
  ['zstd', 1],
  ['zstd', 3],
  ['zstd', 9],
  ['zlib', 1],
  ['zlib', 6],
  ['none', undefined],
]

async function benchCodecs(datasets) {
  const rows = []
  for (const [dname, buf] of datasets) {
    for (const [codec, level] of CODECS) {
      const label = level === undefined ? codec : `${codec}-${level}`
      const frame = await spillway.compress(buf, codec, level)
      const back = await spillway.decompress(frame)
      if (!back.equals(buf)) throw new Error(`spillway ${label} did not round-trip ${dname}`)
      const sc = await median(() => spillway.compress(buf, codec, level))
      const sd = await median(() => spillway.decompress(frame))
      const row = {
        data: dname,
        codec: label,
        spillway: { ratio: buf.length / frame.length, compressMBs: buf.length / MB / sc, decompressMBs: buf.length / MB / sd },
        peers: [],
      }
      for (const peer of peersFor(codec, level)) {
        const out = await peer.c(buf)
        const dec = await peer.d(out)
        if (!Buffer.from(dec).equals(buf)) throw new Error(`${peer.name} ${label} did not round-trip ${dname}`)
        const pc = await median(() => peer.c(buf))
        const pd = await median(() => peer.d(out))
        row.peers.push({
          name: peer.name,
          mode: peer.mode,
          ratio: buf.length / out.length,
          compressMBs: buf.length / MB / pc,
          decompressMBs: buf.length / MB / pd,
        })
      }
      if (row.peers.length) {
        const bestC = row.peers.reduce((a, b) => (b.compressMBs > a.compressMBs ? b : a))
        const bestD = row.peers.reduce((a, b) => (b.decompressMBs > a.decompressMBs ? b : a))
        row.best = {
          compress: `${bestC.name} ${bestC.mode}`,
          decompress: `${bestD.name} ${bestD.mode}`,
          compressRatio: row.spillway.compressMBs / bestC.compressMBs,
          decompressRatio: row.spillway.decompressMBs / bestD.decompressMBs,
        }
        // Like with like: spillway's calls are async, so also against the
        // peer's async API where it has one.
        const a = row.peers.find((p) => p.mode === 'async')
        if (a) {
          row.vsAsync = {
            compressRatio: row.spillway.compressMBs / a.compressMBs,
            decompressRatio: row.spillway.decompressMBs / a.decompressMBs,
          }
        }
      }
      rows.push(row)
      log(`  ${dname.padEnd(8)} ${label.padEnd(7)} done`)
    }
  }
  return rows
}

// ---- generation and sums against numpy -------------------------------------

function runNumpy() {
  try {
    execFileSync('bash', [path.join(ROOT, 'bench', 'setup-venv.sh')], { stdio: ['ignore', 'ignore', 'inherit'] })
  } catch (e) {
    log(`  (numpy venv could not be set up: ${e.message.split('\n')[0]})`)
    return undefined
  }
  // Some processors get OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE set in the
  // environment; numpy runs here without them.
  const env = { ...process.env }
  delete env.OPENBLAS_CORETYPE
  delete env.OPENBLAS_L2_SIZE
  const py = path.join(ROOT, 'bench', '.venv', 'bin', 'python')
  const out = execFileSync(py, [path.join(__dirname, 'numpy_bench.py'), String(N), QUICK ? '3' : '21'], { env, encoding: 'utf8' })
  return JSON.parse(out.trim().split('\n').pop())
}

async function benchCompute(floats, ints) {
  let id = 0
  // Each generated chunk is a fresh 32 MB external buffer that V8's garbage
  // collector frees some calls later, so single calls vary several-fold; a
  // longer warm-up and more repetitions give a stable median.
  const opts = QUICK ? {} : { warmup: 10, minReps: 21, maxReps: 31, budget: 1 }
  const s = {
    random: await median(() => spillway.generateChunk({ kind: 'random', seed: 1, chunkId: id++, len: N }), opts),
    integers: await median(() => spillway.generateChunk({ kind: 'randint', seed: 1, chunkId: id++, len: N, low: 0, high: 10 }), opts),
    sum_float64: await median(() => spillway.reduceChunk(floats, 'float64', 'sum'), opts),
    sum_int64: await median(() => spillway.reduceChunk(ints, 'int64', 'sum'), opts),
  }
  const np = runNumpy()
  const rows = []
  for (const [k, label, target] of [
    ['random', 'random float64 (numpy default_rng().random)', 1.5],
    ['integers', 'randint(0, 10) int64 (numpy integers)', 1.0],
    ['sum_float64', 'sum float64 (numpy .sum())', 1.0],
    ['sum_int64', 'sum int64 (numpy .sum())', 1.0],
  ]) {
    rows.push({
      what: label,
      spillwayMs: s[k] * 1e3,
      numpyMs: np ? np[k] * 1e3 : undefined,
      ratio: np ? np[k] / s[k] : undefined,
      target,
    })
  }
  return { numpy: np && np.numpy, rows }
}

// ---- SpillBuffer against raw fs -------------------------------------------

async function benchSpill() {
  const CHUNKS = QUICK ? 16 : 64
  const LEN = 4 << 20
  const chunks = []
  for (let i = 0; i < CHUNKS; i++) {
    chunks.push(await spillway.generateChunk({ kind: 'random', seed: 7, chunkId: i, len: LEN / 8 }))
  }
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-'))
  let round = 0
  const one = async (kind) => {
    const dir = path.join(base, `${kind}-${round++}`)
    let t0, t1, t2
    if (kind === 'spillway') {
      // A 1 MiB limit forces every 4 MiB chunk straight to disk.
      const sb = new spillway.SpillBuffer({ dir, memoryLimit: 1 << 20, target: 0.75, codec: 'lz4' })
      t0 = process.hrtime.bigint()
      for (let i = 0; i < CHUNKS; i++) await sb.set(`k${i}`, chunks[i])
      t1 = process.hrtime.bigint()
      for (let i = 0; i < CHUNKS; i++) {
        const b = await sb.get(`k${i}`)
        if (b.length !== LEN) throw new Error('short read')
      }
      t2 = process.hrtime.bigint()
      const m = sb.metrics()
      if (m.diskCount !== CHUNKS || m.writeFailures) throw new Error(`not all on disk: ${JSON.stringify(m)}`)
      await sb.close()
    } else {
      fs.mkdirSync(dir, { mode: 0o700 })
      t0 = process.hrtime.bigint()
      for (let i = 0; i < CHUNKS; i++) await fsp.writeFile(path.join(dir, `k${i}`), chunks[i], { mode: 0o600 })
      t1 = process.hrtime.bigint()
      for (let i = 0; i < CHUNKS; i++) {
        const b = await fsp.readFile(path.join(dir, `k${i}`))
        if (b.length !== LEN) throw new Error('short read')
      }
      t2 = process.hrtime.bigint()
    }
    fs.rmSync(dir, { recursive: true, force: true })
    return { write: Number(t1 - t0) / 1e9, read: Number(t2 - t1) / 1e9 }
  }
  const res = { spillway: [], fs: [] }
  try {
    await one('spillway')
    await one('fs')
    for (let r = 0; r < (QUICK ? 2 : 5); r++) {
      res.spillway.push(await one('spillway'))
      res.fs.push(await one('fs'))
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
  const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const bytes = CHUNKS * LEN
  const summary = (rs) => ({
    writeMBs: bytes / MB / med(rs.map((r) => r.write)),
    readMBs: bytes / MB / med(rs.map((r) => r.read)),
    totalMBs: (2 * bytes) / MB / med(rs.map((r) => r.write + r.read)),
  })
  const s = summary(res.spillway)
  const f = summary(res.fs)
  return { chunks: CHUNKS, chunkBytes: LEN, dir: os.tmpdir(), spillway: s, fs: f, ratio: s.totalMBs / f.totalMBs, target: 0.8 }
}

// ---- report ---------------------------------------------------------------

function fmt(x, d = 0) {
  return x === undefined ? '—' : x.toFixed(d)
}

function table(header, rows) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)))
  const line = (cells) => '| ' + cells.map((c, i) => String(c).padEnd(w[i])).join(' | ') + ' |'
  return [line(header), '|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|', ...rows.map(line)].join('\n')
}

async function main() {
  log(`bench/core: node ${process.version}, ${os.cpus()[0].model}, ${os.cpus().length} cpus${QUICK ? ' (quick)' : ''}`)
  const floats = await spillway.generateChunk({ kind: 'random', seed: 1, chunkId: 0, len: N })
  const ints = await spillway.generateChunk({ kind: 'randint', seed: 1, chunkId: 0, len: N, low: 0, high: 10 })
  // Generation first, while the heap is clean: numpy is timed in a fresh
  // process, and the codec runs leave hundreds of MB of external buffers for
  // the garbage collector to free during whatever is timed next.
  log('generation and sums against numpy...')
  const compute = ONLY.includes('compute') ? await benchCompute(floats, ints) : { rows: [] }
  log('codecs on 32 MB buffers...')
  const codecs = ONLY.includes('codecs')
    ? await benchCodecs([
        ['float64', floats],
        ['int64', ints],
      ])
    : []
  log('SpillBuffer spill + unspill against node:fs...')
  const spill = ONLY.includes('spill') ? await benchSpill() : undefined

  const targets = []
  for (const r of codecs) {
    if (!r.best) continue
    targets.push({ what: `${r.codec} compress ${r.data} vs ${r.best.compress}`, ratio: r.best.compressRatio, target: 1.0 })
    targets.push({ what: `${r.codec} decompress ${r.data} vs ${r.best.decompress}`, ratio: r.best.decompressRatio, target: 1.0 })
  }
  for (const r of compute.rows) targets.push({ what: r.what, ratio: r.ratio, target: r.target })
  if (spill) targets.push({ what: 'SpillBuffer spill+unspill vs node:fs write+read', ratio: spill.ratio, target: spill.target })
  for (const t of targets) t.met = t.ratio === undefined ? undefined : t.ratio >= t.target

  const result = {
    date: new Date().toISOString(),
    node: process.version,
    cpu: os.cpus()[0].model,
    cpus: os.cpus().length,
    n: N,
    codecs,
    compute,
    spill,
    targets,
  }
  if (JSON_OUT) {
    console.log(JSON.stringify(result, null, 2))
    return
  }
  console.log('\n### Codecs (32 MB; MB/s = 10^6 bytes/s; c×/d× = spillway / fastest peer variant, × async = spillway / the peer\'s async API; >1 = spillway faster)\n')
  console.log(
    table(
      ['data', 'codec', 'size ratio', 'spillway c MB/s', 'spillway d MB/s', 'peer c MB/s (best)', 'peer d MB/s (best)', 'c ×', 'd ×', 'c × async', 'd × async'],
      codecs.map((r) => {
        const bc = r.peers.length ? Math.max(...r.peers.map((p) => p.compressMBs)) : undefined
        const bd = r.peers.length ? Math.max(...r.peers.map((p) => p.decompressMBs)) : undefined
        return [
          r.data,
          r.codec,
          fmt(r.spillway.ratio, 2) + (r.peers.length ? ` (peer ${fmt(r.peers[0].ratio, 2)})` : ''),
          fmt(r.spillway.compressMBs),
          fmt(r.spillway.decompressMBs),
          r.best ? `${fmt(bc)} (${r.best.compress})` : '—',
          r.best ? `${fmt(bd)} (${r.best.decompress})` : '—',
          r.best ? fmt(r.best.compressRatio, 2) : '—',
          r.best ? fmt(r.best.decompressRatio, 2) : '—',
          r.vsAsync ? fmt(r.vsAsync.compressRatio, 2) : '—',
          r.vsAsync ? fmt(r.vsAsync.decompressRatio, 2) : '—',
        ]
      }),
    ),
  )
  console.log('\nEvery peer variant (MB/s):\n')
  console.log(
    table(
      ['data', 'codec', 'peer', 'mode', 'size ratio', 'c MB/s', 'd MB/s'],
      codecs.flatMap((r) => r.peers.map((p) => [r.data, r.codec, p.name, p.mode, fmt(p.ratio, 2), fmt(p.compressMBs), fmt(p.decompressMBs)])),
    ),
  )
  console.log(`\n### Generation and sums (${N.toLocaleString('en')} values; numpy ${compute.numpy ?? 'unavailable'}; ratio = numpy time / spillway time)\n`)
  console.log(
    table(
      ['what', 'spillway ms', 'numpy ms', 'ratio'],
      compute.rows.map((r) => [r.what, fmt(r.spillwayMs, 2), fmt(r.numpyMs, 2), fmt(r.ratio, 2)]),
    ),
  )
  if (spill) console.log(`\n### SpillBuffer (${spill.chunks} × 4 MiB incompressible, all forced to disk, in ${spill.dir})\n`)
  if (spill) console.log(
    table(
      ['', 'write MB/s', 'read MB/s', 'write+read MB/s'],
      [
        ['spillway SpillBuffer set/get', fmt(spill.spillway.writeMBs), fmt(spill.spillway.readMBs), fmt(spill.spillway.totalMBs)],
        ['node:fs writeFile/readFile', fmt(spill.fs.writeMBs), fmt(spill.fs.readMBs), fmt(spill.fs.totalMBs)],
        ['ratio', fmt(spill.spillway.writeMBs / spill.fs.writeMBs, 2), fmt(spill.spillway.readMBs / spill.fs.readMBs, 2), fmt(spill.ratio, 2)],
      ],
    ),
  )
  console.log('\n### Targets\n')
  console.log(
    table(
      ['target', 'ratio', 'needed', 'met'],
      targets.map((t) => [t.what, fmt(t.ratio, 2), `≥ ${t.target.toFixed(1)}`, t.met === undefined ? '—' : t.met ? 'yes' : 'NO']),
    ),
  )
  const missed = targets.filter((t) => t.met === false).length
  console.log(`\n${targets.length - missed} of ${targets.length} targets met`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
