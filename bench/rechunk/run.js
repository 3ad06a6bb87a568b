#!/usr/bin/env node
// bench/rechunk: spillway's P2P rechunk against Dask's (`method='p2p'`) on
// the same array, as ratios within one run: the climate case of the issue,
// square chunks to tall thin ones ((2000, 2000) to (20000, 200) on the
// recipe's 20000² array with --full; scaled by half on each side, 10000² in
// (1000, 1000) to (10000, 100), by default). Each side in a fresh process
// (a fresh 2-worker cluster) per repetition, the order alternating; the
// array is made and persisted untimed, the rechunk timed; both sides' sums
// are checked against the array's own.
//
//   npm run bench:rechunk      (node bench/rechunk/run.js [--reps N] [--full] [--mem BYTES] [--json])
'use strict'

const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { PY, pythonEnv, ensureVenv, machine } = require('../dask/sides')
const { runProc, spreadOf } = require('../proc')

const { values: opts } = parseArgs({ options: { reps: { type: 'string', default: '5' }, full: { type: 'boolean' }, mem: { type: 'string' }, json: { type: 'boolean' }, verbose: { type: 'boolean' } } })
const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a)
const GiB = 2 ** 30
const SIZE = opts.full ? { n: 20000, from: 2000, to: 200, mem: 6 * GiB } : { n: 10000, from: 1000, to: 100, mem: 2 * GiB }
const MEM = Number(opts.mem ?? SIZE.mem)
const REPS = Number(opts.reps)
const TARGET = 0.5

async function main() {
  ensureVenv(log)
  const args = ['--n', SIZE.n, '--from', SIZE.from, '--to', SIZE.to, '--mem', MEM, '--workers', 2].map(String)
  const sides = {
    spillway: () => runProc(process.execPath, [path.join(__dirname, 'spillway_side.js'), ...args], process.env, 900, { verbose: opts.verbose }),
    dask: () => runProc(PY, [path.join(__dirname, 'py_side.py'), ...args], pythonEnv(), 900, { verbose: opts.verbose, python: true }),
  }
  const m = machine()
  log(`bench/rechunk: ${SIZE.n}² float64 (${((SIZE.n * SIZE.n * 8) / GiB).toFixed(2)} GiB), (${SIZE.from}, ${SIZE.from}) → (${SIZE.n}, ${SIZE.to}), 2 workers × ${(MEM / GiB).toFixed(1)} GiB, ${REPS} reps`)
  log(`machine: ${m.cpu ?? os.cpus()[0].model}, ${os.cpus().length} cpus; load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`)
  const rows = []
  for (let r = 0; r < REPS; r++) {
    const order = r % 2 ? ['dask', 'spillway'] : ['spillway', 'dask']
    const row = {}
    for (const s of order) {
      row[s] = await sides[s]()
      const x = row[s]
      log(`  rep ${r + 1} ${s.padEnd(8)} ${x.error ? `FAILED ${x.error}` : `${x.seconds.toFixed(2)} s, exact ${x.exact}, peak rss ${x.peakRss.map((b) => (b / 2 ** 20).toFixed(0)).join(' / ')} MiB${x.spillBytesWritten ? `, spilled ${(x.spillBytesWritten / 2 ** 20).toFixed(0)} MiB` : ''}`}`)
    }
    rows.push(row)
  }
  const secs = (s) => spreadOf(rows.map((r) => r[s]).filter((x) => !x.error).map((x) => x.seconds))
  const ratio = spreadOf(rows.filter((r) => !r.spillway.error && !r.dask.error).map((r) => r.spillway.seconds / r.dask.seconds))
  const fmt = (x) => (x ? `${x.min.toFixed(2)} / ${x.median.toFixed(2)} / ${x.max.toFixed(2)}` : '—')
  const summary = { size: SIZE, memoryLimit: MEM, reps: REPS, spillway: secs('spillway'), dask: secs('dask'), ratio, exact: rows.every((r) => [r.spillway, r.dask].every((x) => x.error || x.exact)), loadEnd: os.loadavg(), rows }
  log(`\nspillway s min / med / max: ${fmt(summary.spillway)}`)
  log(`Dask P2P s min / med / max: ${fmt(summary.dask)}`)
  log(`spillway / Dask (paired per rep): ${fmt(ratio)}  target ≤ ${TARGET}: ${ratio && ratio.median <= TARGET ? 'met' : 'NOT met'}`)
  if (opts.json) console.log(JSON.stringify(summary))
  const failed = rows.some((r) => r.spillway.error) || !summary.exact
  process.exit(failed ? 1 : 0)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
