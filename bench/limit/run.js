#!/usr/bin/env node
// bench/limit: spillway and Dask against what this machine can physically do
// on the recipe's pressure test (3.2 GB of float64 persisted on 2 × 1 GiB
// workers, then the mean). Each repetition measures the machine's rates in a
// fresh process (rates.js), composes the least time the test could take with
// them (model.js), and runs both sides' pressure test in alternating order;
// prints each side over that limit and spillway over Dask. A second floor
// counts only the bytes spillway really wrote (after compression, its CPU
// taken as free): spillway can beat the first only by writing fewer bytes.
//
//   npm run bench:limit            (node bench/limit/run.js [--reps 5] [--quick] [--json] [--no-dask]
//                                   [--case random|randint] [--codec auto|lz4|lz4+shuffle|...])
'use strict'

const { spawn } = require('node:child_process')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')

const { ensureVenv, machine, runSide } = require('../dask/sides')
const { limitModel, split } = require('./model')
const { LOADED } = require('../load')
const { spreadOf } = require('../core/timing')

const { values: opts } = parseArgs({
  options: { reps: { type: 'string' }, settle: { type: 'string' }, quick: { type: 'boolean' }, json: { type: 'boolean' }, 'no-dask': { type: 'boolean' }, verbose: { type: 'boolean' }, only: { type: 'string' }, case: { type: 'string' }, codec: { type: 'string' } },
  // `npm run bench` passes every suite the same flags.
  strict: false,
})
const REPS = Number(opts.reps ?? (opts.quick ? 2 : 5))
const DASK = !opts['no-dask']
// Seconds of quiet before each measurement and each run: the machine this
// was written on reports freed pages to its host about 2 s after they are
// freed, and a run that starts sooner reuses the previous one's pages.
const SETTLE = Number(opts.settle ?? 3)
const settle = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, SETTLE * 1000)
const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a)
const SIZE = { n: 20_000, chunk: 2_000, ntasks: 0, slices: 0, records: 0 }
// random: the recipe's float64 (incompressible); randint: its randint(0, 10) int64.
const CASE = { case: opts.case ?? 'random', codec: opts.codec ?? 'auto' }
if (!['random', 'randint'].includes(CASE.case)) throw new Error('--case must be random or randint')
// The recipe's cluster, as both sides configure it (checked against what
// spillway's workers report).
const TEST = { bytes: SIZE.n * SIZE.n * 8, workers: 2, memoryLimit: 2 ** 30, target: 0.75 }
// Within 10% of the floor where nothing compresses; under it where the
// bytes compress (only writing fewer bytes can get there).
const TARGET_LIMIT = CASE.case === 'random' ? 1.1 : 1.0
const TARGET_DASK = 0.25

function ratesOnce(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', path.join(__dirname, 'rates.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`rates.js exited ${code}: ${err}`))))
  })
}

/** One rates.js per worker core at once, each with its share of the test's
 *  memory and files; the machine's rate for a step is their sum. */
async function rates() {
  const parallel = Math.min(os.availableParallelism(), TEST.workers)
  const { resident, spilled } = split(TEST)
  const mb = (b) => String(Math.round(b / parallel / 1e6))
  const each = await Promise.all(Array.from({ length: parallel }, () => ratesOnce(['--touch-mb', mb(resident), '--write-mb', mb(spilled), '--case', CASE.case])))
  const sum = (k) => each.reduce((a, r) => a + r[k], 0)
  return { generate: sum('generate'), firstTouch: sum('firstTouch'), write: sum('write'), read: sum('read'), sum: sum('sum'), parallel, cores: each[0].cores, dir: each[0].dir }
}

const f2 = (x) => (x === undefined ? '—' : x.toFixed(2))
const spread = (s) => (s ? `${f2(s.min)} / ${f2(s.median)} / ${f2(s.max)}` : '—')
const gbs = (x) => (x / 1e9).toFixed(2)

async function main() {
  if (DASK) ensureVenv(log)
  const m = machine()
  const loadStart = os.loadavg()
  log(`bench/limit: ${REPS} reps; pressure test (${CASE.case}) ${SIZE.n}² ${CASE.case === 'random' ? 'float64' : 'int64'} (${gbs(SIZE.n * SIZE.n * 8)} GB) on 2 × 1 GiB workers, spillCompression ${CASE.codec}; load ${loadStart.map((l) => l.toFixed(2)).join(' ')}`)
  const reps = []
  for (let rep = 0; rep < REPS; rep++) {
    settle()
    const loadBefore = os.loadavg()[0]
    const rate = await rates()
    const order = DASK ? (rep % 2 ? ['spillway', 'dask'] : ['dask', 'spillway']) : ['spillway']
    const runs = {}
    for (const side of order) {
      settle()
      runs[side] = runSide(side, CASE, SIZE, opts.verbose)
      if (runs[side].error) log(`  rep ${rep + 1} ${side} FAILED: ${runs[side].error}`)
    }
    const sp = runs.spillway
    if (sp.workers !== undefined && (sp.workers !== TEST.workers || sp.memoryLimit !== TEST.memoryLimit || sp.thresholds?.target !== TEST.target)) {
      log(`  (spillway ran ${sp.workers} workers of ${sp.memoryLimit} bytes, target ${sp.thresholds?.target}; the model assumes ${JSON.stringify(TEST)})`)
    }
    const model = limitModel(rate, TEST)
    // Bytes on disk per spilled byte, as the run left them.
    const diskShare = sp.spilledMemoryBytes > 0 ? sp.spilledBytes / sp.spilledMemoryBytes : 1
    const written = limitModel(rate, TEST, diskShare)
    const row = { rep, loadBefore, rates: rate, model, diskShare, written, spillway: sp, dask: runs.dask }
    reps.push(row)
    const t = sp.timings ?? {}
    log(
      `  rep ${rep + 1}/${REPS}: limit ${f2(model.seconds)} s (write ${gbs(rate.write)} GB/s, first touch ${gbs(rate.firstTouch)} GB/s), ${f2(written.seconds)} s for the ${(100 * diskShare).toFixed(1)}% written` +
        `; spillway ${f2(sp.seconds)} s (spill writes ${f2(t.spillSeconds)}, unspill ${f2(t.unspillSeconds)}, tasks ${f2(t.taskSeconds)}, paused ${f2(t.pausedSeconds)} s summed)` +
        (runs.dask ? `; Dask ${f2(runs.dask.seconds)} s` : '') +
        (sp.busyBefore > LOADED || runs.dask?.busyBefore > LOADED ? ` (loaded: ${Math.round(100 * Math.max(sp.busyBefore ?? 0, runs.dask?.busyBefore ?? 0))}% of the CPUs busy before a run)` : ''),
    )
  }
  const ok = (side) => reps.filter((r) => r[side] && !r[side].error)
  const summary = {
    limit: spreadOf(reps.map((r) => r.model.seconds)),
    writtenLimit: spreadOf(reps.map((r) => r.written.seconds)),
    diskShare: spreadOf(reps.map((r) => r.diskShare)),
    spillway: spreadOf(ok('spillway').map((r) => r.spillway.seconds)),
    dask: DASK ? spreadOf(ok('dask').map((r) => r.dask.seconds)) : undefined,
    // Each repetition's run over the limit measured just before it, so a
    // slow spell of the machine falls on both.
    spillwayOverLimit: spreadOf(ok('spillway').map((r) => r.spillway.seconds / r.model.seconds)),
    spillwayOverWritten: spreadOf(ok('spillway').map((r) => r.spillway.seconds / r.written.seconds)),
    daskOverLimit: DASK ? spreadOf(ok('dask').map((r) => r.dask.seconds / r.model.seconds)) : undefined,
    spillwayOverDask: DASK ? spreadOf(reps.filter((r) => r.spillway?.seconds && r.dask?.seconds).map((r) => r.spillway.seconds / r.dask.seconds)) : undefined,
    rates: Object.fromEntries(['generate', 'firstTouch', 'write', 'read', 'sum'].map((k) => [k, spreadOf(reps.map((r) => r.rates[k]))])),
    terms: Object.fromEntries(Object.keys(reps[0].model.terms).map((k) => [k, spreadOf(reps.map((r) => r.model.terms[k]))])),
  }
  const targets = [
    { what: `spillway / limit with no compression, ${CASE.case} (median of each rep over its own limit)`, ratio: summary.spillwayOverLimit?.median, target: TARGET_LIMIT },
    ...(DASK ? [{ what: 'spillway / Dask on (a) (median of paired reps)', ratio: summary.spillwayOverDask?.median, target: TARGET_DASK }] : []),
  ]
  for (const t of targets) t.met = t.ratio !== undefined && t.ratio <= t.target
  const result = { command: `node bench/limit/run.js ${process.argv.slice(2).join(' ')}`.trim(), date: new Date().toISOString(), machine: m, load: { start: loadStart, end: os.loadavg() }, summary, targets, reps }
  if (opts.json) {
    console.log(JSON.stringify(result, null, 2))
    return
  }
  const r0 = reps[0]
  log('')
  log(`machine: ${m.nproc} CPUs (${m.cpu}), ${m.memTotalGib.toFixed(1)} GiB; spill and page-cache files in ${r0.rates.dir}; load average at start ${loadStart.map((l) => l.toFixed(2)).join(' ')}, at end ${result.load.end.map((l) => l.toFixed(2)).join(' ')}`)
  log(`model: ${gbs(r0.model.resident)} GB resident (workers × target × limit), ${gbs(r0.model.spilled)} GB spilled; rates are the sum of ${r0.rates.parallel} processes doing the step at once`)
  log('')
  log(`| rate (${r0.rates.parallel} processes together), GB/s: min / median / max | |\n|---|---|`)
  for (const [k, label] of [['generate', `generation kernel (${CASE.case}, warm memory)`], ['firstTouch', 'first touch of fresh memory'], ['write', 'write new files through the page cache'], ['read', 'read them back from the page cache'], ['sum', `${CASE.case === 'random' ? 'float64' : 'int64'} sum`]]) {
    const s = summary.rates[k]
    log(`| ${label} | ${gbs(s.min)} / ${gbs(s.median)} / ${gbs(s.max)} |`)
  }
  log('')
  log('| step, seconds: min / median / max | |\n|---|---|')
  for (const [k, s] of Object.entries(summary.terms)) log(`| ${k} | ${spread(s)} |`)
  log('')
  log(`bytes on disk per spilled byte (spillway, ${CASE.codec}): ${spread(summary.diskShare)}`)
  log('')
  log('| seconds: min / median / max | limit (every byte written) | limit (the bytes spillway wrote) | spillway | Dask |\n|---|---|---|---|---|')
  log(`| time | ${spread(summary.limit)} | ${spread(summary.writtenLimit)} | ${spread(summary.spillway)} | ${spread(summary.dask)} |`)
  log(`| over the limit | 1 | | ${spread(summary.spillwayOverLimit)} | ${spread(summary.daskOverLimit)} |`)
  log(`| over the written limit | | 1 | ${spread(summary.spillwayOverWritten)} | |`)
  if (DASK) log(`| spillway / Dask | | ${spread(summary.spillwayOverDask)} | |`)
  log('')
  log('| target | ratio (median) | needed | met |\n|---|---|---|---|')
  for (const t of targets) log(`| ${t.what} | ${f2(t.ratio)} | ≤ ${t.target} | ${t.met ? 'yes' : 'NO'} |`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
