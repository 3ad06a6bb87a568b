#!/usr/bin/env node
// bench/frame word count: DESIGN.md's frame word count (readText → split on
// /[^A-Za-z0-9_]+/ → explode → drop '' → groupBy(word).count, splitOut 4)
// against DuckDB's regexp_split_to_array + unnest + GROUP BY on the same
// generated text (Zipf-distributed words, as real text is), 2 workers
// against threads = 2. Fresh processes, order alternating; min / median /
// max and the ratio of medians (target ≤ 1.0×).
//
//   node bench/frame/wordcount.js [--reps N] [--mb 64] [--json] [--verbose]
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { PY, pythonEnv, machine } = require('../dask/sides')
const { runProc, spreadOf } = require('../proc')

const { values: opts } = parseArgs({ options: { reps: { type: 'string' }, mb: { type: 'string' }, json: { type: 'boolean' }, verbose: { type: 'boolean' } }, strict: false })
const REPS = Number(opts.reps ?? 3)
const MB = Number(opts.mb ?? 64)
const MiB = 2 ** 20
const WORKERS = 2
const MEM = 1024 * MiB
const FILES = 4
const BLOCKSIZE = 8 * MiB
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

const sides = {
  spillway: (data) => runProc(process.execPath, [path.join(__dirname, 'wordcount_spillway.js'), '--dir', data.dir, '--mem', String(MEM), '--workers', String(WORKERS), '--blocksize', String(BLOCKSIZE)], process.env, 900, { verbose: opts.verbose }),
  duckdb: (data) => runProc(PY, [path.join(__dirname, 'wordcount_duckdb.py'), '--dir', data.dir, '--mem', String(MEM * WORKERS), '--threads', String(WORKERS)], pythonEnv(), 900, { verbose: opts.verbose, python: true }),
}

async function main() {
  const data = ensureText(MB)
  log(`text: ${data.lines} lines, ~${data.mb} MB in ${data.files} files at ${data.dir}`)
  const results = { spillway: [], duckdb: [] }
  for (let r = 0; r < REPS; r++) {
    for (const side of r % 2 === 0 ? ['spillway', 'duckdb'] : ['duckdb', 'spillway']) {
      const out = await sides[side](data)
      results[side].push(out)
      log(`rep ${r + 1} ${side}: ${out.error ?? `${out.seconds.toFixed(2)} s, ${out.words} distinct words, ${out.total} words`} (busy before ${(out.busyBefore * 100).toFixed(0)} %)`)
    }
  }
  const ok = (side) => results[side].filter((x) => !x.error)
  const agree = ok('spillway').every((s) => ok('duckdb').every((d) => d.words === s.words && d.total === s.total))
  const spread = { spillway: spreadOf(ok('spillway').map((x) => x.seconds)), duckdb: spreadOf(ok('duckdb').map((x) => x.seconds)) }
  const ratio = spread.spillway && spread.duckdb ? spread.spillway.median / spread.duckdb.median : undefined
  const summary = { mb: MB, blocksize: BLOCKSIZE, workers: WORKERS, spread, ratio, agree, target: 1.0, machine: machine() }
  if (opts.json) console.log(JSON.stringify(summary))
  else {
    for (const side of ['spillway', 'duckdb']) {
      const s = spread[side]
      log(`${side}: ${s ? `min ${s.min.toFixed(2)} / median ${s.median.toFixed(2)} / max ${s.max.toFixed(2)} s (n=${s.n})` : 'no run finished'}`)
    }
    log(`word count: spillway / DuckDB = ${ratio?.toFixed(2) ?? '?'}× (target ≤ 1.0×); answers agree: ${agree}`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
