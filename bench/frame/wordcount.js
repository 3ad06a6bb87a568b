#!/usr/bin/env node
// bench/frame word count: DESIGN.md's frame word count (readText → split on
// /[^A-Za-z0-9_]+/ → explode → drop '' → groupBy(word).count, splitOut 4)
// against DuckDB's regexp_split_to_array + unnest + GROUP BY on the same
// generated text (Zipf-distributed words, as real text is), 2 workers
// against threads = 2, and Polars' streaming engine (extract_all of the
// same word pattern, explode, group_by) on 2 threads. Fresh processes, order
// rotating; min / median / max and the ratios of medians (target ≤ 1.0×
// DuckDB).
//
//   node bench/frame/wordcount.js [--size quick|small|big] [--reps N] [--mb MB] [--sides a,b] [--json] [--verbose]
//   node bench/frame/wordcount.js --real DIR [--glob '**/*.[ch]'] ...   real text: files no one here generated
//     (a source tree, such as Debian's linux-source-6.1 unpacked), its many rare words
//     --size quick  64 MB of text on 2 × 1 GiB workers (default)
//     --size small  600 MB on 2 × 1 GiB workers: 0.3× their memory
//     --size big    1.5 GB on 2 × 256 MiB workers: 3× their memory
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { PY, pythonEnv, machine } = require('../dask/sides')
const { runProc, spreadOf } = require('../proc')

const { values: opts } = parseArgs({ options: { real: { type: 'string' }, glob: { type: 'string', default: '**/*.[ch]' }, size: { type: 'string', default: 'quick' }, reps: { type: 'string' }, mb: { type: 'string' }, sides: { type: 'string' }, json: { type: 'boolean' }, verbose: { type: 'boolean' } }, strict: false })
const MiB = 2 ** 20
const SIZES = {
  quick: { mb: 64, mem: 1024 * MiB, blocksize: 8 * MiB },
  small: { mb: 600, mem: 1024 * MiB, blocksize: 32 * MiB },
  big: { mb: 1500, mem: 256 * MiB, blocksize: 16 * MiB },
}
const SIZE = SIZES[opts.size]
if (!SIZE) throw new Error(`--size ${opts.size}: one of ${Object.keys(SIZES).join(', ')}`)
const REPS = Number(opts.reps ?? 3)
const MB = Number(opts.mb ?? SIZE.mb)
const WORKERS = 2
const MEM = SIZE.mem
// Files of ~150 MB at most, as a user's logs or dumps come, and at least 4.
const FILES = Math.max(4, Math.ceil(MB / 150))
const BLOCKSIZE = SIZE.blocksize
const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a)

/** Text of about `mb` MB in FILES files: lines of 4–16 words drawn by Zipf's law (s = 1.1) from 50 000, with punctuation. */
function ensureText(mb) {
  const dir = path.join(os.tmpdir(), 'spillway-bench-frame', `text-${mb}`)
  const done = path.join(dir, '.done')
  if (fs.existsSync(done)) return { dir, ...JSON.parse(fs.readFileSync(done, 'utf8')) }
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  let x = 7
  const rand = () => {
    x = (x + 0x6d2b79f5) | 0
    let t = Math.imul(x ^ (x >>> 15), 1 | x)
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
  const V = 50000
  const vocab = Array.from({ length: V }, (_, i) => {
    let w = ''
    for (let n = 2 + Math.floor(rand() * 7) + (i > 1000 ? 2 : 0); n > 0; n--) w += String.fromCharCode(97 + Math.floor(rand() * 26))
    return i % 17 === 0 ? w[0].toUpperCase() + w.slice(1) : i % 29 === 0 ? `${w}_${i % 100}` : w
  })
  const cum = new Float64Array(V)
  for (let i = 0, s = 0; i < V; i++) cum[i] = s += 1 / (i + 1) ** 1.1
  const pick = () => {
    const r = rand() * cum[V - 1]
    let lo = 0
    let hi = V - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cum[mid] < r) lo = mid + 1
      else hi = mid
    }
    return vocab[lo]
  }
  const PUNCT = [' ', ' ', ' ', ' ', ' ', ', ', '. ', ' — ', ' (', ') ', '; ', ' "', '" ']
  let lines = 0
  for (let f = 0; f < FILES; f++) {
    const fd = fs.openSync(path.join(dir, `part-${f}.txt`), 'w')
    let written = 0
    while (written < (mb * 1e6) / FILES) {
      let chunk = ''
      for (let l = 0; l < 5000; l++) {
        let line = ''
        for (let n = 4 + Math.floor(rand() * 13); n > 0; n--) line += pick() + PUNCT[Math.floor(rand() * PUNCT.length)]
        chunk += line + '\n'
      }
      lines += 5000
      written += Buffer.byteLength(chunk)
      fs.writeSync(fd, chunk)
    }
    fs.closeSync(fd)
  }
  const meta = { lines, files: FILES, mb }
  fs.writeFileSync(done, JSON.stringify(meta))
  return { dir, ...meta }
}

/** A real tree's files under `dir` that match `glob`: their count and bytes (nothing is generated). */
function realText(dir, glob) {
  const files = require('tinyglobby').globSync(glob, { cwd: dir, onlyFiles: true })
  const bytes = files.reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0)
  return { dir: path.resolve(dir), glob, files: files.length, mb: Math.round(bytes / 1e6), lines: 'real' }
}

const sides = {
  spillway: (data) => runProc(process.execPath, [path.join(__dirname, 'wordcount_spillway.js'), '--dir', data.dir, '--glob', data.glob ?? '*.txt', '--mem', String(MEM), '--workers', String(WORKERS), '--blocksize', String(BLOCKSIZE)], process.env, 900, { verbose: opts.verbose }),
  duckdb: (data) => runProc(PY, [path.join(__dirname, 'wordcount_duckdb.py'), '--dir', data.dir, '--glob', data.glob ?? '*.txt', '--mem', String(MEM * WORKERS), '--threads', String(WORKERS)], pythonEnv(), 900, { verbose: opts.verbose, python: true }),
  polars: (data) => runProc(PY, [path.join(__dirname, 'wordcount_polars.py'), '--dir', data.dir], { ...pythonEnv(), POLARS_MAX_THREADS: String(WORKERS) }, 900, { verbose: opts.verbose, python: true }),
}
const names = opts.sides ? opts.sides.split(',') : Object.keys(sides)
for (const n of names) if (!sides[n]) throw new Error(`--sides: ${n} is not one of ${Object.keys(sides).join(', ')}`)

async function main() {
  const data = opts.real ? realText(opts.real, opts.glob) : ensureText(MB)
  log(`text: ${data.lines} lines, ~${data.mb} MB in ${data.files} files at ${data.dir}; ${WORKERS} × ${MEM / MiB} MiB workers`)
  const results = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < REPS; r++) {
    for (const side of names.map((_, i) => names[(i + r) % names.length])) {
      // A peer that failed once fails the same way again: its reason stands for every repetition.
      if (side !== 'spillway' && results[side].some((x) => x.error)) continue
      const out = await sides[side](data)
      results[side].push(out)
      log(`rep ${r + 1} ${side}: ${out.error ?? `${out.seconds.toFixed(2)} s, ${out.words} distinct words, ${out.total} words`} (busy before ${(out.busyBefore * 100).toFixed(0)} %)`)
    }
  }
  const ok = (side) => results[side].filter((x) => !x.error)
  const answers = new Set(names.flatMap((n) => ok(n).map((x) => `${x.words}/${x.total}`)))
  const spread = Object.fromEntries(names.map((n) => [n, spreadOf(ok(n).map((x) => x.seconds))]))
  const ratios = Object.fromEntries(names.filter((n) => n !== 'spillway' && spread[n] && spread.spillway).map((n) => [n, spread.spillway.median / spread[n].median]))
  const failures = Object.fromEntries(names.map((n) => [n, results[n].filter((x) => x.error).map((x) => x.error)]).filter(([, e]) => e.length))
  const summary = { case: 'wordcount', size: opts.size, mb: MB, mem: MEM, blocksize: BLOCKSIZE, workers: WORKERS, reps: REPS, spread, ratios, targets: { duckdb: 1.0 }, failures, agree: answers.size === 1, answers: [...answers], machine: machine() }
  if (opts.json) return console.log(JSON.stringify(summary))
  for (const n of names) {
    const s = spread[n]
    log(`${n}: ${s ? `min ${s.min.toFixed(2)} / median ${s.median.toFixed(2)} / max ${s.max.toFixed(2)} s (n=${s.n})` : 'no run finished'}${failures[n] ? `; failed: ${failures[n][0]}` : ''}`)
  }
  for (const [n, v] of Object.entries(ratios)) log(`word count: spillway / ${n} = ${v.toFixed(2)}×${n === 'duckdb' ? ` (target ≤ 1.0×: ${v <= 1 ? 'met' : 'NOT met'})` : ''}`)
  log(`answers agree: ${answers.size === 1} (${[...answers].join(', ')})`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
