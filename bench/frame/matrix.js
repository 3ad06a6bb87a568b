#!/usr/bin/env node
// bench/frame's whole matrix in one go: every case (group-by, join, sort,
// Parquet scan, word count) at both sizes (0.3× and 3× the workers'
// memory) against every peer, each through run.js / wordcount.js with
// their rotating repetitions; one JSON line per cell appended to --out (so
// an interrupted run keeps what finished, and --resume skips those cells),
// then the Markdown table BENCHMARKS.md takes.
//
//   node bench/frame/matrix.js [--reps 5] [--out matrix.jsonl] [--resume] [--cells groupby:small,join:big,...] [--timeout S]
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { spawnSync } = require('node:child_process')

const { values: opts } = parseArgs({
  options: { reps: { type: 'string', default: '5' }, out: { type: 'string', default: path.join(__dirname, '..', 'out', 'frame-matrix.jsonl') }, resume: { type: 'boolean' }, cells: { type: 'string' }, timeout: { type: 'string', default: '900' } },
})
const CASES = ['groupby', 'join', 'sort', 'parquet-scan', 'wordcount']
const SIZES = ['small', 'big']
const all = CASES.flatMap((c) => SIZES.map((s) => `${c}:${s}`))
// quick (60 MB): a smoke run of the harness, named only by --cells.
const known = [...all, ...CASES.map((c) => `${c}:quick`)]
const cells = opts.cells ? opts.cells.split(',') : all
for (const c of cells) if (!known.includes(c)) throw new Error(`--cells: ${c} is not one of ${known.join(', ')}`)
fs.mkdirSync(path.dirname(opts.out), { recursive: true })

const done = () => (fs.existsSync(opts.out) ? fs.readFileSync(opts.out, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [])
const have = new Set(opts.resume ? done().map((r) => `${r.case}:${r.size}`) : [])

for (const cell of cells) {
  if (have.has(cell)) continue
  const [c, size] = cell.split(':')
  const script = c === 'wordcount' ? 'wordcount.js' : 'run.js'
  const args = [path.join(__dirname, script), ...(size === 'quick' && c !== 'wordcount' ? ['--quick'] : ['--size', size]), '--reps', opts.reps, '--json', ...(c === 'wordcount' ? [] : ['--case', c, '--timeout', opts.timeout])]
  const t0 = Date.now()
  console.error(`== ${cell} (${new Date().toISOString()})`)
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 1 << 26 })
  const line = r.stdout.trim().split('\n').pop()
  let row
  try {
    row = { ...JSON.parse(line), wallS: (Date.now() - t0) / 1000 }
  } catch {
    row = { case: c, size, error: `exit ${r.status}: ${line?.slice(0, 300)}` }
  }
  fs.appendFileSync(opts.out, JSON.stringify(row) + '\n')
}

// The table: one row per cell, each side's median (min–max, n), the ratios against each peer.
const f = (s) => (s ? `${s.median.toFixed(2)} s (${s.min.toFixed(2)}–${s.max.toFixed(2)}, n=${s.n})` : '')
const peers = ['duckdb', 'polars', 'dask']
console.log(`| case | size | spillway | ${peers.join(' | ')} | spillway / ${peers.join(', / ')} | targets |`)
console.log(`|------|------|----------|${peers.map(() => '----').join('|')}|----|----|`)
for (const r of done().filter((r) => cells.includes(`${r.case}:${r.size}`))) {
  if (r.error) {
    console.log(`| ${r.case} | ${r.size} | ${r.error} |`)
    continue
  }
  const side = (n) => f(r.spread?.[n]) || (r.failures?.[n] ? `failed: ${r.failures[n][0].slice(0, 120)}` : '–')
  const ratios = peers.map((n) => (r.ratios?.[n] ? `${r.ratios[n].toFixed(2)}×` : '–')).join(', ')
  const targets = Object.entries(r.targets ?? {}).map(([n, t]) => `≤ ${t}× ${n}: ${r.ratios?.[n] === undefined ? 'no ratio' : r.ratios[n] <= t ? 'met' : 'missed'}`).join('; ')
  console.log(`| ${r.case} | ${r.size} | ${side('spillway')} | ${peers.map(side).join(' | ')} | ${ratios} | ${targets}${r.agree ? '' : ' (answers differ!)'} |`)
}
