#!/usr/bin/env node
// bench/dask: the recipe's workloads in Dask distributed and in spillway, on
// the same machine, in one run, as ratios (spillway time / Dask time).
// Installs its own Python environment under bench/.venv (via
// bench/setup-venv.sh, shared with bench/core), runs the two sides
// alternately, each case on a fresh cluster, and prints a table of medians.
//
//   npm run bench:dask                    (node bench/dask/run.js [flags])
//     --reps N     repetitions per side and case (default 5)
//     --quick      smaller sizes (16 000², 2 000 tiny tasks), 1 rep unless --reps
//     --only a,b   cases by name (or --only=a,b): random, randint-lz4, ..., tasks
//     --json       print the figures as JSON instead of the table
//     --verbose    show both sides' stderr
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ROOT, ensureVenv, machine, runSide } = require('./sides')
const { LOADED } = require('../load')

const { argv, flag, value } = require('../args')
const JSON_OUT = flag('--json')
const QUICK = flag('--quick')
const VERBOSE = flag('--verbose')
const REPS = Number(value('--reps') ?? (QUICK ? 1 : 5))
const ONLY = value('--only')?.split(',')
const NAMES = ['random', 'randint-lz4', 'randint-zstd', 'randint-snappy', 'randint-none', 'randint-auto', 'tasks', 'submit', 'map', 'pipeline']
const log = JSON_OUT ? (...a) => console.error(...a) : (...a) => console.log(...a)

const SIZE = QUICK ? { n: 16_000, chunk: 2_000, ntasks: 2_000, slices: 12, records: 4_194_304 } : { n: 20_000, chunk: 2_000, ntasks: 10_000, slices: 48, records: 4_194_304 }

const CASES = [
  { name: 'random', label: '(a) random 3.2 GB, mean', case: 'random', codec: 'auto', target: 0.33 },
  ...['lz4', 'zstd', 'snappy', 'none', 'auto'].map((codec) => ({
    name: `randint-${codec}`,
    label: `(b) randint, sum, ${codec}`,
    case: 'randint',
    codec,
    target: 0.33,
  })),
  { name: 'tasks', label: `(c) ${SIZE.ntasks} tiny tasks`, case: 'tasks', codec: 'auto', target: 0.2 },
  { name: 'submit', label: `(d) ${SIZE.ntasks} tiny submit calls + gather`, case: 'submit', codec: 'auto', target: 0.1 },
  { name: 'map', label: `(d) ${SIZE.ntasks} tiny tasks by one map + gather`, case: 'map', codec: 'auto', target: 0.1 },
  { name: 'pipeline', label: `(e) user pipeline, ${SIZE.slices} slices (${((SIZE.slices * SIZE.records * 16) / 2 ** 30).toFixed(1)} GiB)`, case: 'pipeline', codec: 'auto', target: 0.33 },
].filter((c) => !ONLY || !ONLY.some((n) => NAMES.includes(n)) || ONLY.includes(c.name))

// ---- answers ------------------------------------------------------------------

/** The expected value and 6σ band of each workload's answer. */
function expected(c) {
  const n = SIZE.n * SIZE.n
  if (c.case === 'random') return { mean: 0.5, tol: 6 * Math.sqrt(1 / 12 / n) }
  if (c.case === 'randint') return { mean: 4.5 * n, tol: 6 * Math.sqrt(8.25 * n) }
  if (c.case === 'pipeline') return { mean: SIZE.slices * SIZE.records, tol: 0 }
  if (c.case === 'submit' || c.case === 'map') return { mean: (SIZE.ntasks * (SIZE.ntasks + 1)) / 2, tol: 0 }
  return { mean: SIZE.ntasks / 2, tol: 6 * Math.sqrt(SIZE.ntasks / 12) }
}

function answerOk(c, answer) {
  const e = expected(c)
  return typeof answer === 'number' && Math.abs(answer - e.mean) <= e.tol
}

// ---- table ------------------------------------------------------------------------

function median(xs) {
  const s = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b)
  if (!s.length) return undefined
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

function summarise(c, runs) {
  const side = (name) => {
    const ok = runs.filter((r) => r.side === name && !r.error)
    const pick = (k) => median(ok.map((r) => r[k]))
    return {
      runs: ok.length,
      errors: runs.filter((r) => r.side === name && r.error).map((r) => r.error),
      seconds: pick('seconds'),
      secondsMin: Math.min(...ok.map((r) => r.seconds)),
      secondsMax: Math.max(...ok.map((r) => r.seconds)),
      // Repetitions that started while other work kept the CPUs busy.
      loadedRuns: ok.filter((r) => r.busyBefore > LOADED).length,
      persistSeconds: pick('persistSeconds'),
      reduceSeconds: pick('reduceSeconds'),
      startupSeconds: pick('startupSeconds'),
      spilledBytes: pick('spilledBytes'),
      spilledMemoryBytes: pick('spilledMemoryBytes'),
      // On-disk size of the spilled chunks over their size in memory: the
      // codec's effect alone, apart from how many chunks were spilled.
      diskOverMemory: median(ok.map((r) => (r.spilledMemoryBytes ? r.spilledBytes / r.spilledMemoryBytes : undefined))),
      peakSpillBytes: pick('peakSpillBytes'),
      peakMemoryBytes: pick('peakMemoryBytes'),
      finalMemoryBytes: pick('finalMemoryBytes'),
      peakRssBytes: pick('peakRssBytes'),
      answers: ok.map((r) => r.answer),
      answersOk: ok.length > 0 && ok.every((r) => answerOk(c, r.answer)),
    }
  }
  const dask = side('dask')
  const spillway = side('spillway')
  const ratio = dask.seconds && spillway.seconds ? spillway.seconds / dask.seconds : undefined
  return {
    name: c.name,
    label: c.label,
    codec: c.codec,
    target: c.target,
    ratio,
    met: ratio !== undefined ? ratio <= c.target : undefined,
    spillNotLarger: c.case === 'randint' && dask.spilledBytes !== undefined && spillway.spilledBytes !== undefined ? spillway.spilledBytes <= dask.spilledBytes : undefined,
    perTaskUs: ['tasks', 'submit', 'map'].includes(c.case) ? { dask: (dask.seconds / SIZE.ntasks) * 1e6, spillway: (spillway.seconds / SIZE.ntasks) * 1e6 } : undefined,
    expected: expected(c),
    dask,
    spillway,
  }
}

const gib = (b) => (b === undefined ? '—' : (b / 2 ** 30).toFixed(2))
const ratio2 = (x) => (x === undefined ? '—' : x.toFixed(3))
const secs = (s) => (s === undefined ? '—' : s.toFixed(2))

const spread = (s) => (s.runs ? `${secs(s.secondsMin)} / ${secs(s.seconds)} / ${secs(s.secondsMax)}${s.loadedRuns ? ` (${s.loadedRuns} loaded)` : ''}` : '—')

function table(rows) {
  const head = ['workload', 'Dask s min / med / max', 'spillway s min / med / max', 'ratio (medians)', 'target', 'met', 'spill GiB D/S', 'disk/mem D/S', 'peak mem GiB D/S', 'held at end GiB D/S', 'answers']
  const body = rows.map((r) => [
    r.label,
    spread(r.dask),
    spread(r.spillway),
    r.ratio === undefined ? '—' : r.ratio.toFixed(3),
    `≤ ${r.target}`,
    r.met === undefined ? '—' : r.met ? 'yes' : 'NO',
    `${gib(r.dask.spilledBytes)} / ${gib(r.spillway.spilledBytes)}${r.spillNotLarger === false ? ' (more)' : ''}`,
    `${ratio2(r.dask.diskOverMemory)} / ${ratio2(r.spillway.diskOverMemory)}`,
    `${gib(r.dask.peakMemoryBytes)} / ${gib(r.spillway.peakMemoryBytes)}`,
    `${gib(r.dask.finalMemoryBytes)} / ${gib(r.spillway.finalMemoryBytes)}`,
    r.dask.answersOk && r.spillway.answersOk ? 'ok' : 'WRONG',
  ])
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)))
  const line = (cells) => '| ' + cells.map((c, i) => c.padEnd(w[i])).join(' | ') + ' |'
  return [line(head), '|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|', ...body.map(line)].join('\n')
}

function phases(rows) {
  const out = ['', 'Phases (medians, s): persist+wait / reduce — Dask vs spillway; cluster start-up apart']
  for (const r of rows) {
    out.push(
      `  ${r.label.padEnd(28)} Dask ${secs(r.dask.persistSeconds)} / ${secs(r.dask.reduceSeconds)}` +
        `   spillway ${secs(r.spillway.persistSeconds)} / ${secs(r.spillway.reduceSeconds)}` +
        `   start-up ${secs(r.dask.startupSeconds)} vs ${secs(r.spillway.startupSeconds)}` +
        (r.perTaskUs ? `   per task ${r.perTaskUs.dask.toFixed(0)} µs vs ${r.perTaskUs.spillway.toFixed(0)} µs` : ''),
    )
  }
  return out.join('\n')
}

function notes(rows) {
  const out = []
  for (const r of rows) {
    for (const [name, s] of [['Dask', r.dask], ['spillway', r.spillway]]) {
      for (const e of s.errors) out.push(`  ${r.label}: ${name} failed: ${e}`)
      if (s.runs && !s.answersOk) out.push(`  ${r.label}: ${name} answers ${s.answers.join(', ')} outside ${r.expected.mean} ± ${r.expected.tol.toPrecision(3)}`)
    }
    if (r.spillNotLarger === false) {
      out.push(
        `  ${r.label}: spillway spilled more bytes than Dask: it kept ${gib(r.spillway.finalMemoryBytes)} GiB in memory against Dask's ${gib(r.dask.finalMemoryBytes)} GiB` +
          ` (spilled ${gib(r.spillway.spilledMemoryBytes)} vs ${gib(r.dask.spilledMemoryBytes)} GiB of chunks; on disk ${ratio2(r.spillway.diskOverMemory)} vs ${ratio2(r.dask.diskOverMemory)} of their size)`,
      )
    }
  }
  return out
}

// ---- main -------------------------------------------------------------------------

function main() {
  ensureVenv(log)
  const m = machine()
  const loadStart = os.loadavg()
  log(`bench/dask: ${CASES.length} cases × ${REPS} reps × 2 sides, ${SIZE.n}² (chunks ${SIZE.chunk}), ${SIZE.ntasks} tiny tasks; load ${loadStart.map((l) => l.toFixed(2)).join(' ')}`)
  const runs = new Map(CASES.map((c) => [c.name, []]))
  const started = Date.now()
  for (let rep = 0; rep < REPS; rep++) {
    for (const c of CASES) {
      // Alternate which side goes first, so drift in the machine's load
      // falls on both.
      const order = (rep + CASES.indexOf(c)) % 2 ? ['spillway', 'dask'] : ['dask', 'spillway']
      for (const side of order) {
        const r = runSide(side, c, SIZE, VERBOSE)
        runs.get(c.name).push({ ...r, rep })
        log(`  rep ${rep + 1}/${REPS} ${c.name.padEnd(14)} ${side.padEnd(8)} ${r.error ? 'FAILED ' + r.error : `${r.seconds.toFixed(2)} s, spill ${gib(r.spilledBytes)} GiB, answer ${r.answer}`}`)
      }
    }
  }
  const rows = CASES.map((c) => summarise(c, runs.get(c.name)))
  const result = {
    command: `node bench/dask/run.js ${argv.join(' ')}`.trim(),
    date: new Date().toISOString(),
    wallSeconds: (Date.now() - started) / 1000,
    machine: m,
    load: { start: loadStart, end: os.loadavg() },
    size: SIZE,
    reps: REPS,
    rows,
    runs: Object.fromEntries(runs),
  }
  const outDir = path.join(ROOT, 'bench', 'out')
  fs.mkdirSync(outDir, { recursive: true })
  const file = path.join(outDir, `dask-${result.date.replace(/[:.]/g, '-')}.json`)
  fs.writeFileSync(file, JSON.stringify(result, null, 2))
  if (JSON_OUT) {
    console.log(JSON.stringify(result, null, 2))
  } else {
    log('')
    log(`machine: ${m.nproc} CPUs (${m.cpu}), ${m.memTotalGib.toFixed(1)} GiB; node ${m.node}, python ${m.python}, dask ${m.dask}, distributed ${m.distributed}, numpy ${m.numpy}`)
    log(`load average at start ${loadStart.map((l) => l.toFixed(2)).join(' ')}, at end ${result.load.end.map((l) => l.toFixed(2)).join(' ')}; ${result.wallSeconds.toFixed(0)} s`)
    log(`ratio = spillway median / Dask median over ${REPS} rep(s), met only when the medians meet it; "loaded": runs in the second before which other work kept more than ${LOADED * 100}% of the CPUs busy; spill = bytes on disk from the scheduler's metrics with the array still held`)
    log('')
    log(table(rows))
    log(phases(rows))
    const n = notes(rows)
    if (n.length) log(['', 'Notes:', ...n].join('\n'))
    log(`\nraw figures: ${path.relative(ROOT, file)}`)
  }
  const bad = rows.some((r) => !r.dask.answersOk || !r.spillway.answersOk)
  process.exitCode = bad ? 1 : 0
}

main()
