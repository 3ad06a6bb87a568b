#!/usr/bin/env node
// bench/frame: frames against DuckDB (threads = the workers, memory_limit =
// the workers' total), Polars (streaming engine, POLARS_MAX_THREADS = the
// workers) and Dask DataFrame (P2P shuffle, a LocalCluster of the same
// workers) on the same generated files. Every side runs in a fresh process
// per repetition, the order rotating; min / median / max, and each peer's
// ratio of medians (spillway / peer).
//
//   node bench/frame/run.js [--case groupby|join|sort|parquet-scan] [--size small|big] [--reps N] [--sides a,b] [--quick] [--json] [--verbose] [--method auto|tree|shuffle] [--timeout S]
//     --timeout     seconds one side's run may take (default 1800); a peer that
//               fails or runs past it is not run again in later repetitions
//               (the failure is reported once, with its reason)
//     --size small  ~600 MB of CSV on 2 × 1 GiB workers: 0.3× their memory (default)
//     --size big    ~1.5 GB of CSV on 2 × 256 MiB workers: 3× their memory
//     --quick       ~60 MB of CSV on 2 × 1 GiB workers
//     --case parquet-scan: a filter (x > 500) then a group-by by cat over the
//               same data as Parquet (written once by DuckDB); DuckDB alone beside spillway
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { PY, pythonEnv, machine } = require('../dask/sides')
const { runProc, spreadOf } = require('../proc')
const { ensureData } = require('./gen')

const { values: opts } = parseArgs({
  options: { case: { type: 'string', default: 'groupby' }, size: { type: 'string', default: 'small' }, reps: { type: 'string' }, sides: { type: 'string' }, quick: { type: 'boolean' }, json: { type: 'boolean' }, verbose: { type: 'boolean' }, method: { type: 'string' }, timeout: { type: 'string' } },
  strict: false,
})
const MiB = 2 ** 20
const WORKERS = 2
const SIZES = {
  quick: { data: { tag: 'quick', bytes: 60e6, files: 6, keys: 5000 }, mem: 1024 * MiB, blocksize: 8 * MiB },
  small: { data: { tag: 'default', bytes: 600e6, files: 24, keys: 50000 }, mem: 1024 * MiB, blocksize: 32 * MiB },
  big: { data: { tag: 'big', bytes: 1.5e9, files: 48, keys: 200000 }, mem: 256 * MiB, blocksize: 16 * MiB },
}
const SIZE = SIZES[opts.quick ? 'quick' : opts.size]
if (!SIZE) throw new Error(`--size ${opts.size}: one of small, big`)
const BLOCKSIZE = SIZE.blocksize
const REPS = Number(opts.reps ?? (opts.quick ? 3 : 5))
const TIMEOUT = Number(opts.timeout ?? 1800)
const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a)

/** Each case: its target ratios against each peer (spillway / peer ≤ target). */
const CASES = {
  groupby: { what: 'group-by of 2 keys with count, sum, mean, min, max', targets: { duckdb: 1.0, dask: 0.25 } },
  join: { what: 'every row joined with the label of its key (a table of one row per key)', targets: { duckdb: 1.0, dask: 0.25 }, dim: true },
  sort: { what: 'every row sorted by k, then x descending', targets: { duckdb: 1.5 } },
  'parquet-scan': { what: 'a filter (x > 500), then a group-by by cat, over the data as Parquet', targets: { duckdb: 1.0 }, parquet: true },
}
const CASE = CASES[opts.case]
if (!CASE) throw new Error(`--case ${opts.case}: one of ${Object.keys(CASES).join(', ')}`)

/** The join's other side: one row per key, beside the data (not matched by its *.csv). */
function ensureDim(dir, keys) {
  const file = path.join(dir, '..', `dim-${keys}.csv`)
  if (!fs.existsSync(file)) fs.writeFileSync(file, 'k,label\n' + Array.from({ length: keys }, (_, k) => `${k},label-${k % 97}`).join('\n') + '\n')
  return file
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

const common = (data) => ['--dir', data.dir, '--case', opts.case, ...(data.dim ? ['--dim', data.dim] : [])]
const SIDES = {
  spillway: (data) => runProc(process.execPath, [path.join(__dirname, 'spillway_side.js'), ...common(data), '--mem', String(SIZE.mem), '--workers', String(WORKERS), '--blocksize', String(BLOCKSIZE), ...(opts.method ? ['--method', opts.method] : [])], process.env, TIMEOUT, { verbose: opts.verbose }),
  duckdb: (data) => runProc(PY, [path.join(__dirname, CASE.parquet ? 'parquet.py' : 'duckdb_side.py'), ...common(data), '--mem', String(SIZE.mem * WORKERS), '--threads', String(WORKERS)], pythonEnv(), TIMEOUT, { verbose: opts.verbose, python: true }),
  polars: (data) => runProc(PY, [path.join(__dirname, 'polars_side.py'), ...common(data)], { ...pythonEnv(), POLARS_MAX_THREADS: String(WORKERS) }, TIMEOUT, { verbose: opts.verbose, python: true }),
  dask: (data) => runProc(PY, [path.join(__dirname, 'dask_side.py'), ...common(data), '--mem', String(SIZE.mem), '--workers', String(WORKERS), '--blocksize', String(BLOCKSIZE)], pythonEnv(), TIMEOUT, { verbose: opts.verbose, python: true }),
}
const names = opts.sides ? opts.sides.split(',') : (CASE.sides ?? Object.keys(SIDES))
for (const n of names) if (!SIDES[n]) throw new Error(`--sides: ${n} is not one of ${Object.keys(SIDES).join(', ')}`)

async function main() {
  const csv = ensureData(SIZE.data)
  const data = CASE.parquet ? await parquetCopy(csv) : csv
  if (CASE.dim) data.dim = ensureDim(data.dir, SIZE.data.keys)
  log(`bench/frame ${opts.case} (${CASE.what}): ${data.rows} rows in ${data.files} files at ${data.dir}; ${WORKERS} × ${SIZE.mem / MiB} MiB workers`)
  const results = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < REPS; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length])
    for (const side of order) {
      // A peer that failed once (out of memory, past the timeout) fails the same way again: its reason stands for every repetition.
      if (side !== 'spillway' && results[side].some((x) => x.error)) continue
      const out = await SIDES[side](data)
      results[side].push(out)
      log(`rep ${r + 1} ${side}: ${out.error ?? `${out.seconds.toFixed(2)} s, ${out.groups} groups, ${out.rows} rows`} (busy before ${(out.busyBefore * 100).toFixed(0)} %)`)
    }
  }
  const ok = (side) => results[side].filter((x) => !x.error)
  const answers = new Set(names.flatMap((n) => ok(n).map((x) => `${x.groups}/${x.rows}`)))
  const spread = Object.fromEntries(names.map((n) => [n, spreadOf(ok(n).map((x) => x.seconds))]))
  const ratios = Object.fromEntries(names.filter((n) => n !== 'spillway' && spread[n] && spread.spillway).map((n) => [n, spread.spillway.median / spread[n].median]))
  const failures = Object.fromEntries(names.map((n) => [n, results[n].filter((x) => x.error).map((x) => x.error)]).filter(([, e]) => e.length))
  const summary = { case: opts.case, size: opts.quick ? 'quick' : opts.size, data: SIZE.data, mem: SIZE.mem, blocksize: BLOCKSIZE, workers: WORKERS, reps: REPS, spread, ratios, targets: CASE.targets, failures, agree: answers.size === 1, answers: [...answers], machine: machine() }
  if (opts.json) return console.log(JSON.stringify(summary))
  for (const n of names) {
    const s = spread[n]
    log(`${n}: ${s ? `min ${s.min.toFixed(2)} / median ${s.median.toFixed(2)} / max ${s.max.toFixed(2)} s (n=${s.n})` : 'no run finished'}${failures[n] ? `; failed: ${failures[n][0]}` : ''}`)
  }
  for (const [n, v] of Object.entries(ratios)) log(`${opts.case}: spillway / ${n} = ${v.toFixed(2)}×${CASE.targets[n] ? ` (target ≤ ${CASE.targets[n]}×: ${v <= CASE.targets[n] ? 'met' : 'NOT met'})` : ''}`)
  log(`answers agree: ${answers.size === 1} (${[...answers].join(', ')})`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
