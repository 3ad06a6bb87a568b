#!/usr/bin/env node
// Many small Parquet files: the parquet-scan case of run.js (a filter x > 500,
// then count and sum by cat) over `--files` files of `--rows` rows, written
// once by pyarrow (smallfiles_make.py). spillway (2 workers of 1 GiB, its
// default 64 MiB blocksize unless --blocksize), DuckDB (threads 2) and one
// plain Node process reading them with hyparquet (smallfiles_node.js); each
// side a fresh process per repetition, the order rotating.
//
//   node bench/frame/smallfiles.js [--files 2000] [--rows 2000] [--reps 3] [--sides spillway,duckdb,node] [--blocksize B] [--before DIR]
//     --before DIR  adds the side 'before': spillway_side.js of another checkout (built), for a before/after
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { PY, pythonEnv } = require('../dask/sides')
const { runProc, spreadOf } = require('../proc')

const { values: o } = parseArgs({ options: { files: { type: 'string', default: '2000' }, rows: { type: 'string', default: '2000' }, reps: { type: 'string', default: '3' }, sides: { type: 'string', default: 'spillway,duckdb,node' }, blocksize: { type: 'string', default: String(64 * 2 ** 20) }, verbose: { type: 'boolean' }, before: { type: 'string' } } })
const dir = path.join(os.tmpdir(), 'spillway-bench-frame', `small-${o.files}x${o.rows}`)
const GiB = 2 ** 30

const SIDES = {
  spillway: () => runProc(process.execPath, [path.join(__dirname, 'spillway_side.js'), '--dir', dir, '--case', 'parquet-scan', '--mem', String(GiB), '--workers', '2', '--blocksize', o.blocksize], process.env, 900, { verbose: o.verbose }),
  duckdb: () => runProc(PY, [path.join(__dirname, 'parquet.py'), '--dir', dir, '--mem', String(2 * GiB), '--threads', '2'], pythonEnv(), 900, { verbose: o.verbose, python: true }),
  before: () => runProc(process.execPath, [path.join(o.before ?? '.', 'bench', 'frame', 'spillway_side.js'), '--dir', dir, '--case', 'parquet-scan', '--mem', String(GiB), '--workers', '2', '--blocksize', o.blocksize], process.env, 900, { verbose: o.verbose }),
  node: () => runProc(process.execPath, [path.join(__dirname, 'smallfiles_node.js'), '--dir', dir], process.env, 900, { verbose: o.verbose }),
}

async function main() {
  if (!fs.existsSync(path.join(dir, '.done'))) {
    const made = await runProc(PY, [path.join(__dirname, 'smallfiles_make.py'), '--out', dir, '--files', o.files, '--rows', o.rows], pythonEnv(), 900, { python: true })
    if (made.error) throw new Error(`writing the files: ${made.error}`)
    fs.writeFileSync(path.join(dir, '.done'), '')
  }
  const names = o.sides.split(',')
  console.log(`bench/frame smallfiles: ${o.files} Parquet files of ${o.rows} rows at ${dir}`)
  const results = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < Number(o.reps); r++) {
    for (const side of names.map((_, i) => names[(i + r) % names.length])) {
      const out = await SIDES[side]()
      results[side].push(out)
      console.log(`rep ${r + 1} ${side}: ${out.error ?? `${out.seconds.toFixed(2)} s, ${out.groups} groups, ${out.rows} rows${out.partitions ? `, ${out.partitions} partitions` : ''}`}`)
    }
  }
  const spread = Object.fromEntries(names.map((n) => [n, spreadOf(results[n].map((x) => x.seconds))]))
  for (const n of names) if (spread[n]) console.log(`${n}: min ${spread[n].min.toFixed(2)} / median ${spread[n].median.toFixed(2)} / max ${spread[n].max.toFixed(2)} s`)
  for (const n of names.filter((n) => n !== 'spillway' && spread[n] && spread.spillway)) console.log(`spillway / ${n} = ${(spread.spillway.median / spread[n].median).toFixed(2)}×`)
  console.log(`answers agree: ${new Set(names.flatMap((n) => results[n].filter((x) => !x.error).map((x) => `${x.groups}/${x.rows}`))).size === 1}`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
