#!/usr/bin/env node
// bench/frame: a frame group-by with aggregates (count, sum, mean, min, max
// by two keys) against DuckDB on the same generated CSV files, 2 workers
// against DuckDB's threads = 2 and memory_limit = the workers' total. Every
// side runs in a fresh process per repetition, the order alternating;
// min / median / max, and the ratio of medians.
//
//   node bench/frame/run.js [--reps N] [--quick] [--case groupby|parquet-scan] [--json] [--verbose]
//     --quick   ~60 MB of CSV (default ~600 MB, 0.3× the workers' 2 GiB)
//     --case    parquet-scan: a filter (x > 500) then a group-by by cat over
//               the same data as Parquet (written once by DuckDB)
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { PY, pythonEnv, machine } = require('../dask/sides')
const { runProc, spreadOf } = require('../proc')
const { ensureData } = require('./gen')

const { values: opts } = parseArgs({ options: { case: { type: 'string' }, reps: { type: 'string' }, quick: { type: 'boolean' }, json: { type: 'boolean' }, verbose: { type: 'boolean' } }, strict: false })
const QUICK = !!opts.quick
const REPS = Number(opts.reps ?? (QUICK ? 3 : 5))
const MiB = 2 ** 20
const WORKERS = 2
const MEM = 1024 * MiB
const SIZE = QUICK ? { tag: 'quick', bytes: 60e6, files: 6, keys: 5000 } : { tag: 'default', bytes: 600e6, files: 24, keys: 50000 }
const BLOCKSIZE = QUICK ? 8 * MiB : 32 * MiB
const CASE = opts.case ?? 'groupby'
const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a)

const sides = {
  spillway: (data) => runProc(process.execPath, [path.join(__dirname, 'spillway_side.js'), '--dir', data.dir, '--mem', String(MEM), '--workers', String(WORKERS), '--blocksize', String(BLOCKSIZE), '--case', CASE], process.env, 900, { verbose: opts.verbose }),
  duckdb: (data) => runProc(PY, [path.join(__dirname, CASE === 'parquet-scan' ? 'parquet.py' : 'duckdb_side.py'), '--dir', data.dir, '--mem', String(MEM * WORKERS), '--threads', String(WORKERS)], pythonEnv(), 900, { verbose: opts.verbose, python: true }),
}

/** The CSV data as Parquet beside it, written once by DuckDB. */
async function parquetCopy(csv) {
  const dir = path.join(csv.dir, 'parquet')
  const done = path.join(dir, '.done')
  if (!fs.existsSync(done)) {
    const out = await runProc(PY, [path.join(__dirname, 'parquet.py'), '--make', '--dir', csv.dir, '--out', dir], pythonEnv(), 900, { verbose: opts.verbose, python: true })
    if (out.error) throw new Error(`writing the Parquet copy: ${out.error}`)
    fs.writeFileSync(done, '')
  }
  return { ...csv, dir }
}

async function main() {
  const data = CASE === 'parquet-scan' ? await parquetCopy(ensureData(SIZE)) : ensureData(SIZE)
  log(`data: ${data.rows} rows in ${data.files} files at ${data.dir}`)
  const results = { spillway: [], duckdb: [] }
  for (let r = 0; r < REPS; r++) {
    const order = r % 2 === 0 ? ['spillway', 'duckdb'] : ['duckdb', 'spillway']
    for (const side of order) {
      const out = await sides[side](data)
      results[side].push(out)
      log(`rep ${r + 1} ${side}: ${out.error ?? `${out.seconds.toFixed(2)} s, ${out.groups} groups, ${out.rows} rows`} (busy before ${(out.busyBefore * 100).toFixed(0)} %)`)
    }
  }
  const ok = (side) => results[side].filter((x) => !x.error)
  const agree = ok('spillway').every((s) => ok('duckdb').every((d) => d.groups === s.groups && d.rows === s.rows))
  const spread = { spillway: spreadOf(ok('spillway').map((x) => x.seconds)), duckdb: spreadOf(ok('duckdb').map((x) => x.seconds)) }
  const ratio = spread.spillway && spread.duckdb ? spread.spillway.median / spread.duckdb.median : undefined
  const summary = { case: CASE, size: SIZE, blocksize: BLOCKSIZE, workers: WORKERS, memPerWorker: MEM, spread, ratio, agree, target: 1.0, machine: machine() }
  if (opts.json) console.log(JSON.stringify(summary))
  else {
    for (const side of ['spillway', 'duckdb']) {
      const s = spread[side]
      log(`${side}: ${s ? `min ${s.min.toFixed(2)} / median ${s.median.toFixed(2)} / max ${s.max.toFixed(2)} s (n=${s.n})` : 'no run finished'}`)
    }
    log(`${CASE}: spillway / DuckDB = ${ratio?.toFixed(2) ?? '?'}× (target ≤ 1.0×); answers agree: ${agree}`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
