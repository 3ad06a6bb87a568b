#!/usr/bin/env node
// bench/core: spillway's native core against the anchors of the issue, side
// by side in one run: the Node codec packages (lz4-napi, snappy, zstd-napi,
// node:zlib) on the same 32 MB buffers, c-blosc2 for the byte shuffle
// (blosc.js), numpy for generation and sums, and raw node:fs for spill I/O. Prints a table of ratios (>1 means spillway is
// faster) and the targets; `--json` prints the figures as JSON instead.
//
//   npm run bench:core            (or: node bench/core/run.js [--json] [--quick] [--only=codecs] [--codecs=lz4,zstd])
'use strict'

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { promisify } = require('node:util')

const spillway = require('../..')
const { printReport } = require('./report')
const { benchBlosc, printBlosc } = require('./blosc')
const { busyShare } = require('../load')
const { MB, alternate, median, rateOf, spreadOf } = require('./timing')

const ROOT = path.resolve(__dirname, '..', '..')
const JSON_OUT = process.argv.includes('--json')
const QUICK = process.argv.includes('--quick')
// --only=codecs,compute,spill runs a subset (for iterating on one part).
const ONLY = (process.argv.find((a) => a.startsWith('--only=')) || '--only=codecs,blosc,compute,spill').slice(7).split(',')
// --codecs=lz4,zstd-1 times only those codec rows (names as in the table).
const CODEC_FILTER = process.argv.find((a) => a.startsWith('--codecs='))?.slice(9).split(',')
const log = JSON_OUT ? (...a) => console.error(...a) : (...a) => console.log(...a)

const N = 4_000_000 // values per buffer: 32 MB of float64 or int64

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
      if (CODEC_FILTER && !CODEC_FILTER.includes(label) && !CODEC_FILTER.includes(codec)) continue
      const frame = await spillway.compress(buf, codec, level)
      const back = await spillway.decompress(frame)
      if (!back.equals(buf)) throw new Error(`spillway ${label} did not round-trip ${dname}`)
      const peers = []
      for (const peer of peersFor(codec, level)) {
        const out = await peer.c(buf)
        const dec = await peer.d(out)
        if (!Buffer.from(dec).equals(buf)) throw new Error(`${peer.name} ${label} did not round-trip ${dname}`)
        peers.push({ ...peer, out })
      }
      // spillway's own variants, as the peers' are: async (the thread pool)
      // and sync (the calling thread); its figure is the faster median.
      const c = await alternate([() => spillway.compress(buf, codec, level), () => spillway.compressSync(buf, codec, level), ...peers.map((p) => () => p.c(buf))])
      const d = await alternate([() => spillway.decompress(frame), () => spillway.decompressSync(frame), ...peers.map((p) => () => p.d(p.out))])
      const variants = ['async', 'sync'].map((mode, i) => ({ mode, compress: rateOf(buf.length, c[i]), decompress: rateOf(buf.length, d[i]) }))
      const fastest = (k) => variants.reduce((a, b) => (b[k].median > a[k].median ? b : a))
      const row = {
        data: dname,
        codec: label,
        spillway: { ratio: buf.length / frame.length, compress: fastest('compress').compress, decompress: fastest('decompress').decompress, compressMode: fastest('compress').mode, decompressMode: fastest('decompress').mode, variants },
        peers: peers.map((p, i) => ({
          name: p.name,
          mode: p.mode,
          ratio: buf.length / p.out.length,
          compress: rateOf(buf.length, c[i + 2]),
          decompress: rateOf(buf.length, d[i + 2]),
        })),
      }
      for (const side of [row.spillway, ...row.peers]) {
        side.compressMBs = side.compress.median
        side.decompressMBs = side.decompress.median
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
        // Like with like: spillway's async calls against the peer's async
        // API where it has one.
        const a = row.peers.find((p) => p.mode === 'async')
        if (a) {
          row.vsAsync = {
            compressRatio: variants[0].compress.median / a.compressMBs,
            decompressRatio: variants[0].decompress.median / a.decompressMBs,
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

function numpyReady() {
  try {
    execFileSync('bash', [path.join(ROOT, 'bench', 'setup-venv.sh')], { stdio: ['ignore', 'ignore', 'inherit'] })
    return true
  } catch (e) {
    log(`  (numpy venv could not be set up: ${e.message.split('\n')[0]})`)
    return false
  }
}

function runNumpy() {
  // Some processors get OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE set in the
  // environment; numpy runs here without them.
  const env = { ...process.env }
  delete env.OPENBLAS_CORETYPE
  delete env.OPENBLAS_L2_SIZE
  const py = path.join(ROOT, 'bench', '.venv', 'bin', 'python')
  const out = execFileSync(py, [path.join(__dirname, 'numpy_bench.py'), String(N), QUICK ? '5' : '15'], { env, encoding: 'utf8' })
  return JSON.parse(out.trim().split('\n').pop())
}

const COMPUTE = [
  ['random', 'random float64 (numpy default_rng().random)', 1.5],
  ['integers', 'randint(0, 10) int64 (numpy integers)', 1.0],
  ['sum_float64', 'sum float64 (numpy .sum())', 1.0],
  ['sum_int64', 'sum int64 (numpy .sum())', 1.0],
]

async function benchCompute(floats, ints) {
  let id = 0
  // Each generated chunk is a fresh 32 MB external buffer that V8's garbage
  // collector frees some calls later, so single calls vary several-fold; a
  // longer warm-up and more repetitions give a stable median per round.
  const opts = QUICK ? {} : { warmup: 10, minReps: 15, maxReps: 21, budget: 1 }
  // Each figure is the faster of the async call and its sync variant, as
  // for the peers' APIs.
  const faster = async (a, b) => Math.min(await median(a, opts), await median(b, opts))
  const random = { kind: 'random', seed: 1, len: N }
  const randint = { kind: 'randint', seed: 1, len: N, low: 0, high: 10 }
  const spillwayRound = async () => ({
    random: await faster(() => spillway.generateChunk({ ...random, chunkId: id++ }), () => spillway.generateChunkSync({ ...random, chunkId: id++ })),
    integers: await faster(() => spillway.generateChunk({ ...randint, chunkId: id++ }), () => spillway.generateChunkSync({ ...randint, chunkId: id++ })),
    // The hop to the thread pool and back costs about as much as the sum.
    sum_float64: await faster(() => spillway.reduceChunk(floats, 'float64', 'sum'), () => spillway.reduceChunkSync(floats, 'float64', 'sum')),
    sum_int64: await faster(() => spillway.reduceChunk(ints, 'int64', 'sum'), () => spillway.reduceChunkSync(ints, 'int64', 'sum')),
  })
  const withNumpy = numpyReady()
  // Rounds alternate which side goes first; numpy runs in a fresh process
  // each round, spillway in this one.
  const rounds = { spillway: [], numpy: [] }
  for (let r = 0; r < (QUICK ? 3 : 5); r++) {
    const order = r % 2 ? ['numpy', 'spillway'] : ['spillway', 'numpy']
    for (const side of order) {
      if (side === 'spillway') rounds.spillway.push(await spillwayRound())
      else if (withNumpy) rounds.numpy.push(runNumpy())
    }
  }
  const ms = (rs, k) => (rs.length ? spreadOf(rs.map((x) => x[k] * 1e3)) : undefined)
  const rows = COMPUTE.map(([k, label, target]) => {
    const sp = ms(rounds.spillway, k)
    const np = ms(rounds.numpy, k)
    return { what: label, spillwayMs: sp, numpyMs: np, ratio: np ? np.median / sp.median : undefined, target }
  })
  return { numpy: rounds.numpy[0]?.numpy, rounds: rounds.spillway.length, rows }
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
    // Each round the other side goes first: a side that runs right after
    // the other deleted its files gets pages the kernel has just freed,
    // which on a virtual machine are cheaper to touch than older ones.
    for (let r = 0; r < (QUICK ? 3 : 5); r++) {
      for (const side of r % 2 ? ['fs', 'spillway'] : ['spillway', 'fs']) res[side].push(await one(side))
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
  const bytes = CHUNKS * LEN
  const summary = (rs) => ({
    writeMBs: bytes / MB / spreadOf(rs.map((r) => r.write)).median,
    readMBs: bytes / MB / spreadOf(rs.map((r) => r.read)).median,
    totalMBs: (2 * bytes) / MB / spreadOf(rs.map((r) => r.write + r.read)).median,
    total: rateOf(2 * bytes, spreadOf(rs.map((r) => r.write + r.read))),
  })
  const s = summary(res.spillway)
  const f = summary(res.fs)
  return { chunks: CHUNKS, chunkBytes: LEN, rounds: res.fs.length, dir: os.tmpdir(), spillway: s, fs: f, ratio: s.totalMBs / f.totalMBs, target: 0.8 }
}

async function main() {
  const loadStart = os.loadavg()
  const busyStart = busyShare()
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
  log('shuffle codecs against c-blosc2...')
  const blosc = ONLY.includes('blosc') && numpyReady() ? await benchBlosc({ quick: QUICK, log }) : undefined
  log('SpillBuffer spill + unspill against node:fs...')
  const spill = ONLY.includes('spill') ? await benchSpill() : undefined

  const targets = []
  for (const r of codecs) {
    if (!r.best) continue
    targets.push({ what: `${r.codec} compress ${r.data} vs ${r.best.compress}`, ratio: r.best.compressRatio, target: 1.0 })
    targets.push({ what: `${r.codec} decompress ${r.data} vs ${r.best.decompress}`, ratio: r.best.decompressRatio, target: 1.0 })
  }
  for (const r of blosc?.rows ?? []) {
    targets.push({ what: `${r.config} compress ${r.data} vs Blosc`, ratio: r.compressVsBlosc.median, target: 1.0 })
    targets.push({ what: `${r.config} decompress ${r.data} vs Blosc`, ratio: r.decompressVsBlosc.median, target: 1.0 })
    // Blosc's size over spillway's: ≥ 0.98 is spillway's output within 2% of Blosc's.
    targets.push({ what: `${r.config} size ${r.data} vs Blosc (Blosc's bytes / spillway's)`, ratio: 1 / r.sizeVsBlosc, target: 0.98 })
  }
  for (const r of compute.rows) targets.push({ what: r.what, ratio: r.ratio, target: r.target })
  if (spill) targets.push({ what: 'SpillBuffer spill+unspill vs node:fs write+read', ratio: spill.ratio, target: spill.target })
  for (const t of targets) t.met = t.ratio === undefined ? undefined : t.ratio >= t.target

  const result = {
    date: new Date().toISOString(),
    load: { start: loadStart, end: os.loadavg(), busyStart, busyEnd: busyShare() },
    node: process.version,
    cpu: os.cpus()[0].model,
    cpus: os.cpus().length,
    n: N,
    codecs,
    blosc,
    compute,
    spill,
    targets,
  }
  if (JSON_OUT) {
    console.log(JSON.stringify(result, null, 2))
    return
  }
  printReport(result)
  printBlosc(blosc, log)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
