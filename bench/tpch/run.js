#!/usr/bin/env node
// bench/tpch: the 22 TPC-H queries (queries.js) on Parquet files from
// tpchgen-cli, each answer checked against DuckDB's SQL (sql.js) over the
// same files, and timed against it: spillway on 2 workers (about 1 GiB
// each), DuckDB in this process with threads = 2 and memory_limit = the
// workers' total. The sides alternate within each repetition; --as-written
// adds spillway with { optimize: false } (each method as written). Prints
// each query's times (min of the repetitions), the ratio to DuckDB, and the
// geometric means.
//
//   pip install tpchgen-cli && tpchgen-cli parquet -s 1 --output-dir=/data/sf1
//   node bench/tpch/run.js --data /data/sf1 [--queries q1,q3] [--reps 3] [--as-written] [--blocksize '32 MiB'] [--json]
'use strict'

const { join } = require('node:path')
const { existsSync } = require('node:fs')
const { parseArgs } = require('node:util')
const { DuckDBInstance } = require('@duckdb/node-api')
const { setupClient, frame } = require('../../dist')
const { frames } = require('./queries')
const { sql } = require('./sql')

const TABLES = ['lineitem', 'orders', 'customer', 'part', 'partsupp', 'supplier', 'nation', 'region']
const { values: opts } = parseArgs({ options: { data: { type: 'string' }, queries: { type: 'string' }, reps: { type: 'string', default: '3' }, 'as-written': { type: 'boolean' }, json: { type: 'boolean' }, 'mem-gb': { type: 'string', default: '2' }, blocksize: { type: 'string' } } })
if (!opts.data) {
  console.error('usage: node bench/tpch/run.js --data DIR (tpchgen-cli parquet output) [--queries q1,q3] [--reps N] [--as-written] [--json]')
  process.exit(2)
}
for (const t of TABLES) if (!existsSync(join(opts.data, `${t}.parquet`))) throw new Error(`${join(opts.data, `${t}.parquet`)} is missing: make it with tpchgen-cli parquet`)
const names = opts.queries ? opts.queries.split(',') : Object.keys(frames)
const reps = Number(opts.reps)

/** A value as the two engines' rows compare: numbers (bigints, decimals, dates as days), strings, null. */
function norm(v) {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return Number(v)
  if (v instanceof Date) return Math.round(v.getTime() / 86_400_000)
  if (typeof v === 'object' && 'days' in v) return v.days
  if (typeof v === 'object' && typeof v.toDouble === 'function') return v.toDouble()
  return v
}
const sameValue = (a, b) => (typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)) : a === b)
const sameRows = (a, b) => a.length === b.length && a.every((r, i) => r.length === b[i].length && r.every((v, j) => sameValue(v, b[i][j])))
const sorted = (rows) => [...rows].sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1))

function tableRows(t) {
  const cols = t.schema.fields.map((f) => t.getChild(f.name))
  // apache-arrow gives a date32 as its milliseconds: days, as DuckDB's dates are compared.
  const days = t.schema.fields.map((f) => String(f.type).startsWith('Date'))
  const out = []
  for (let i = 0; i < t.numRows; i++) out.push(cols.map((c, j) => (days[j] && c.get(i) !== null ? Math.round(Number(c.get(i)) / 86_400_000) : norm(c.get(i)))))
  return out
}

async function main() {
  const gb = Number(opts['mem-gb'])
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: gb, reserveMemGb: 0.5, dashboard: false, silenceLogs: true })
  const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: `${gb}GB` })
  const duck = await db.connect()
  for (const t of TABLES) await duck.run(`CREATE VIEW ${t} AS SELECT * FROM read_parquet('${join(opts.data, `${t}.parquet`)}')`)
  const tables = () => Object.fromEntries(TABLES.map((t) => [t, frame.readParquet(join(opts.data, `${t}.parquet`), opts.blocksize ? { blocksize: opts.blocksize } : {})]))
  const results = []
  try {
    for (const q of names) {
      const times = { spillway: [], duckdb: [], asWritten: [] }
      let exact = true
      let note = ''
      for (let r = 0; r < reps; r++) {
        const sides = ['spillway', 'duckdb', ...(opts['as-written'] ? ['asWritten'] : [])]
        if (r % 2 === 1) sides.reverse()
        for (const side of sides) {
          const t0 = process.hrtime.bigint()
          let rows
          if (side === 'duckdb') {
            const res = await duck.runAndReadAll(sql[q])
            rows = res.getRowsJS().map((row) => row.map(norm))
          } else {
            const table = await client.compute(frames[q](tables()), side === 'asWritten' ? { optimize: false } : {})
            rows = tableRows(table)
          }
          times[side].push(Number(process.hrtime.bigint() - t0) / 1e9)
          if (side !== 'duckdb') times[`${side}Rows`] = rows
          else times.duckRows = rows
        }
        if (r === 0) {
          const mine = times.spillwayRows
          if (!sameRows(mine, times.duckRows)) {
            exact = sameRows(sorted(mine), sorted(times.duckRows))
            note = exact ? 'same rows, ties in another order' : `differs: ${mine.length} rows against ${times.duckRows.length}; first ${JSON.stringify(mine[0])} against ${JSON.stringify(times.duckRows[0])}`
          }
        }
      }
      const best = (xs) => (xs.length ? Math.min(...xs) : undefined)
      const row = { query: q, rows: times.duckRows.length, exact, note, spillway: best(times.spillway), duckdb: best(times.duckdb), asWritten: best(times.asWritten), spread: { spillway: times.spillway, duckdb: times.duckdb, asWritten: times.asWritten } }
      row.ratio = row.spillway / row.duckdb
      results.push(row)
      if (!opts.json) console.log(`${q.padEnd(4)} ${exact ? 'exact' : 'WRONG'} ${String(row.rows).padStart(6)} rows  spillway ${row.spillway.toFixed(2)} s  duckdb ${row.duckdb.toFixed(2)} s  ${row.ratio.toFixed(2)}x${row.asWritten !== undefined ? `  as written ${row.asWritten.toFixed(2)} s` : ''}${note ? `  (${note})` : ''}`)
    }
  } finally {
    duck.closeSync()
    await client.close()
    await cluster.close()
  }
  const geo = (xs) => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length)
  const summary = { exact: results.filter((r) => r.exact).length, of: results.length, geomeanRatio: geo(results.map((r) => r.ratio)), spillwayTotal: results.reduce((s, r) => s + r.spillway, 0), duckdbTotal: results.reduce((s, r) => s + r.duckdb, 0) }
  if (opts['as-written']) summary.asWrittenGeomeanRatio = geo(results.map((r) => r.asWritten / r.duckdb))
  if (opts.json) console.log(JSON.stringify({ results, summary }, null, 1))
  else console.log(`${summary.exact} of ${summary.of} exact; geometric mean spillway / duckdb ${summary.geomeanRatio.toFixed(2)}x (${summary.spillwayTotal.toFixed(1)} s against ${summary.duckdbTotal.toFixed(1)} s)${summary.asWrittenGeomeanRatio ? `; as written ${summary.asWrittenGeomeanRatio.toFixed(2)}x` : ''}`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
