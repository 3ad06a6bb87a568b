#!/usr/bin/env node
// bench/core's shuffle comparison: spillway's 'lz4+shuffle' and
// 'zstd+shuffle' against c-blosc2 (the `blosc2` package) with the same
// settings on the same buffers: byte shuffle for the values' size, one
// thread, LZ4 at its default acceleration (Blosc clevel 9) and zstd levels 1
// and 3 (Blosc clevel 1 and 2). Rounds alternate which side goes first; each
// round's figure is the median of its calls, and the table shows
// min / median / max over the rounds.
//
//   node bench/core/blosc.js [--quick] [--json]     (also part of bench/core/run.js)
'use strict'

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const spillway = require('../..')
const { MB, spreadOf } = require('./timing')

const ROOT = path.resolve(__dirname, '..', '..')
const PY = path.join(ROOT, 'bench', '.venv', 'bin', 'python')
const N = 4_000_000 // 32 MB of 8-byte values, as the rest of bench/core

const CONFIGS = [
  { label: 'lz4+shuffle', codec: 'lz4', clevel: 9, spillway: ['lz4+shuffle', undefined] },
  { label: 'zstd-1+shuffle', codec: 'zstd', clevel: 1, spillway: ['zstd+shuffle', 1] },
  { label: 'zstd-3+shuffle', codec: 'zstd', clevel: 2, spillway: ['zstd+shuffle', 3] },
]

/** A reproducible uniform in [0, 1) per index (a 32-bit integer hash). */
function noise(i) {
  let x = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b)
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35)
  return ((x ^ (x >>> 16)) >>> 0) / 2 ** 32
}

/** A smooth field on a 2-D grid, sums of sinusoids plus a little noise: a
 *  stand-in for a climate variable (a temperature in K, to 0.01 K). */
function smoothField(C, rows, cols) {
  const a = new C(rows * cols)
  for (let r = 0; r < rows; r++) {
    const y = r / rows
    for (let c = 0; c < cols; c++) {
      const x = c / cols
      const i = r * cols + c
      a[i] = 280 + 20 * Math.sin(2 * Math.PI * (x + 0.3 * y)) * Math.cos(2 * Math.PI * 2 * y) + 4 * Math.sin(2 * Math.PI * 9 * x) * Math.sin(2 * Math.PI * 7 * y) + 0.01 * (noise(i) - 0.5)
    }
  }
  return a
}

/** The real dataset: the elevation grid matplotlib ships (int16 metres). */
function demFile(dir) {
  const out = path.join(dir, 'dem.i16')
  const code = "import sys, numpy as np, matplotlib.cbook as cb; d = np.load(cb.get_sample_data('jacksboro_fault_dem.npz', asfileobj=False)); d['elevation'].astype('<i2').tofile(sys.argv[1])"
  execFileSync(PY, ['-c', code, out])
  const b = fs.readFileSync(out)
  return new Int16Array(b.buffer, b.byteOffset, b.length / 2)
}

async function datasets(dir) {
  const f64 = (b) => new Float64Array(b.buffer, b.byteOffset, b.length / 8)
  const i64 = (b) => new BigInt64Array(b.buffer, b.byteOffset, b.length / 8)
  const list = [
    { name: 'float64 random', view: f64(await spillway.generateChunk({ kind: 'random', seed: 1, chunkId: 0, len: N })) },
    { name: 'int64 randint(0,10)', view: i64(await spillway.generateChunk({ kind: 'randint', seed: 1, chunkId: 0, len: N, low: 0, high: 10 })) },
    { name: 'float32 smooth field', view: smoothField(Float32Array, 2000, 4000) },
    { name: 'float64 smooth field', view: smoothField(Float64Array, 2000, 2000) },
    { name: 'int16 DEM (matplotlib)', view: demFile(dir) },
  ]
  for (const d of list) {
    d.typesize = d.view.BYTES_PER_ELEMENT
    d.bytes = Buffer.from(d.view.buffer, d.view.byteOffset, d.view.byteLength)
    d.path = path.join(dir, `${d.name.replace(/[^a-z0-9]+/gi, '_')}.bin`)
    fs.writeFileSync(d.path, d.bytes)
    // Small buffers get more calls, so every figure covers ~32 MB.
    d.reps = Math.max(5, Math.ceil((8 * N) / d.bytes.length))
  }
  return list
}

// Python frees Blosc's output the moment the call returns and the next call
// reuses that memory; a Node Buffer waits for the garbage collector, and an
// unlucky call pays the kernel's page faults for fresh memory instead. A
// collection between calls (untimed) gives spillway what Python gives Blosc:
// the memory a long-running worker recycles.
require('node:v8').setFlagsFromString('--expose-gc')
const collect = require('node:vm').runInNewContext('gc')

const now = () => process.hrtime.bigint()
const secs = (t) => Number(process.hrtime.bigint() - t) / 1e9
const med = (xs) => spreadOf(xs).median

/** One round of spillway: every dataset and config, median seconds of its
 *  calls. As elsewhere in bench/core the figure is the faster of the async
 *  API (the thread pool, buffers from the pool) and the sync one. */
async function spillwayRound(sets, reps) {
  const out = []
  for (const d of sets) {
    for (const cfg of CONFIGS) {
      const [codec, level] = cfg.spillway
      const best = { compress: Infinity, decompress: Infinity }
      let frame
      for (const sync of [false, true]) {
        const c = []
        const dd = []
        for (let i = 0; i < (reps ?? d.reps); i++) {
          let t = now()
          frame = sync ? spillway.compressSync(d.view, codec, level) : await spillway.compress(d.view, codec, level)
          c.push(secs(t))
          t = now()
          if (sync) spillway.decompressSync(frame)
          else await spillway.decompress(frame)
          dd.push(secs(t))
          // Small buffers come from malloc, which recycles them already.
          if (d.bytes.length >= 1 << 20) collect()
        }
        best.compress = Math.min(best.compress, med(c))
        best.decompress = Math.min(best.decompress, med(dd))
      }
      out.push({ data: d.name, config: cfg.label, bytes: d.bytes.length, compressed: frame.length, ...best })
    }
  }
  return out
}

function bloscRound(manifest) {
  const env = { ...process.env }
  delete env.OPENBLAS_CORETYPE
  const out = execFileSync(PY, [path.join(__dirname, 'blosc_bench.py'), manifest, '5'], { env, encoding: 'utf8', maxBuffer: 16 << 20 })
  return JSON.parse(out.trim().split('\n').pop())
}

function bloscReady() {
  try {
    execFileSync(PY, ['-c', 'import blosc2, matplotlib'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** The comparison; undefined when bench/.venv lacks blosc2 (BENCH_EXTRA_PACKAGES="blosc2 matplotlib" bash bench/setup-venv.sh). */
async function benchBlosc({ quick = false, log = console.log } = {}) {
  if (!bloscReady()) {
    log('  (blosc2 or matplotlib missing from bench/.venv: BENCH_EXTRA_PACKAGES="blosc2 matplotlib" bash bench/setup-venv.sh)')
    return undefined
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-blosc-'))
  try {
    const sets = await datasets(dir)
    const manifest = path.join(dir, 'manifest.json')
    fs.writeFileSync(manifest, JSON.stringify({ datasets: sets.map((d) => ({ name: d.name, path: d.path, typesize: d.typesize, reps: d.reps })), configs: CONFIGS }))
    for (const d of sets) {
      for (const cfg of CONFIGS) {
        const back = spillway.decompressSync(spillway.compressSync(d.view, ...cfg.spillway))
        if (!back.equals(d.bytes)) throw new Error(`spillway ${cfg.label} did not round-trip ${d.name}`)
      }
    }
    await spillwayRound(sets, 1) // warm-up
    const rounds = { spillway: [], blosc: [] }
    let version
    for (let r = 0; r < (quick ? 3 : 5); r++) {
      for (const side of r % 2 ? ['blosc', 'spillway'] : ['spillway', 'blosc']) {
        if (side === 'spillway') rounds.spillway.push(await spillwayRound(sets))
        else {
          const b = bloscRound(manifest)
          version = `${b.blosc2} (c-blosc2 ${b.clib})`
          rounds.blosc.push(b.results)
        }
      }
      log(`  blosc round ${r + 1} done`)
    }
    const rows = []
    for (const d of sets) {
      for (const cfg of CONFIGS) {
        const pick = (rs) => rs.map((round) => round.find((x) => x.data === d.name && x.config === cfg.label))
        const sp = pick(rounds.spillway)
        const bl = pick(rounds.blosc)
        const rate = (xs, k) => spreadOf(xs.map((x) => x.bytes / MB / x[k]))
        const row = {
          data: d.name,
          typesize: d.typesize,
          bytes: d.bytes.length,
          config: cfg.label,
          bloscClevel: cfg.clevel,
          bloscBlocksize: bl[0].blocksize,
          spillway: { compressed: sp[0].compressed, ratio: d.bytes.length / sp[0].compressed, compress: rate(sp, 'compress'), decompress: rate(sp, 'decompress') },
          blosc: { compressed: bl[0].compressed, ratio: d.bytes.length / bl[0].compressed, compress: rate(bl, 'compress'), decompress: rate(bl, 'decompress') },
        }
        row.sizeVsBlosc = row.spillway.compressed / row.blosc.compressed
        // Each round's spillway figure over the Blosc figure of the same round.
        const per = (k) => spreadOf(sp.map((s, i) => bl[i][k] / s[k]))
        row.compressVsBlosc = per('compress')
        row.decompressVsBlosc = per('decompress')
        rows.push(row)
      }
    }
    return { blosc2: version, rounds: rounds.spillway.length, simd: spillway.simdLevel?.(), rows }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const f2 = (x) => x.toFixed(2)
const r0 = (s) => `${s.min.toFixed(0)} / ${s.median.toFixed(0)} / ${s.max.toFixed(0)}`
const r2 = (s) => `${f2(s.min)} / ${f2(s.median)} / ${f2(s.max)}`

function printBlosc(b, log = console.log) {
  if (!b) return
  log('')
  log(`spillway against Blosc (${b.blosc2}), one thread each, byte shuffle for the values' size; ${b.rounds} alternating rounds, min / median / max`)
  log('')
  log('| data | codec | ratio spillway | ratio Blosc | size / Blosc | compress MB/s spillway | Blosc | spillway / Blosc | decompress MB/s spillway | Blosc | spillway / Blosc |')
  log('|---|---|---|---|---|---|---|---|---|---|---|')
  for (const r of b.rows) {
    log(
      `| ${r.data} | ${r.config} (Blosc clevel ${r.bloscClevel}) | ${f2(r.spillway.ratio)} | ${f2(r.blosc.ratio)} | ${r.sizeVsBlosc.toFixed(3)} | ${r0(r.spillway.compress)} | ${r0(r.blosc.compress)} | ${r2(r.compressVsBlosc)} | ${r0(r.spillway.decompress)} | ${r0(r.blosc.decompress)} | ${r2(r.decompressVsBlosc)} |`,
    )
  }
  const met = (k, t) => b.rows.filter((r) => r[k].median >= t).length
  log('')
  log(`targets: compress ≥ 1.0× Blosc in ${met('compressVsBlosc', 1)} of ${b.rows.length}, decompress in ${met('decompressVsBlosc', 1)} of ${b.rows.length}; size within 2% (≤ 1.02) in ${b.rows.filter((r) => r.sizeVsBlosc <= 1.02).length} of ${b.rows.length}`)
}

module.exports = { benchBlosc, printBlosc, smoothField }

if (require.main === module) {
  const quick = process.argv.includes('--quick')
  const json = process.argv.includes('--json')
  const log = json ? (...a) => console.error(...a) : console.log
  benchBlosc({ quick, log })
    .then((b) => (json ? console.log(JSON.stringify({ date: new Date().toISOString(), cpu: os.cpus()[0].model, cpus: os.cpus().length, load: os.loadavg(), ...b }, null, 2)) : printBlosc(b, log)))
    .catch((e) => {
      console.error(e)
      process.exit(1)
    })
}
