#!/usr/bin/env node
// spillway's side of bench/frame: the group-by (or join, or sort) over the CSV files on a fresh
// cluster of `--workers` workers of `--mem` bytes each; start-up timed apart.
// Prints one JSON line.
'use strict'

const path = require('node:path')
const { parseArgs } = require('node:util')
const { frame, col, count, sum, mean, min, max } = require('../..')
const { startBenchCluster } = require('../cluster')

const { values: o } = parseArgs({
  options: {
    dir: { type: 'string' },
    mem: { type: 'string' },
    blocksize: { type: 'string', default: String(32 << 20) },
    // 'parquet-scan': a filter then a group-by over the Parquet copy of the data.
    case: { type: 'string', default: 'groupby' },
    workers: { type: 'string', default: '2' },
    case: { type: 'string', default: 'groupby' },
    dim: { type: 'string' },
    // The groupBy's method ('auto', 'tree', 'shuffle'); the library's default when left out.
    method: { type: 'string' },
  },
})

async function main() {
  const t0 = performance.now()
  const { client } = await startBenchCluster('frame', Number(o.workers), Number(o.mem))
  const startup = (performance.now() - t0) / 1000
  try {
    const t1 = performance.now()
    const scan = o.case === 'parquet-scan'
    const f = scan ? frame.readParquet(path.join(o.dir, '*.parquet'), { columns: ['cat', 'x', 'y'], blocksize: Number(o.blocksize) }) : frame.readCsv(path.join(o.dir, '*.csv'), { blocksize: Number(o.blocksize) })
    // join: every row with its key's label (the one-partition table of labels is broadcast even at broadcastBytes 0); sort: by k, then x descending.
    const query = scan
      ? f.filter(col('x').gt(500)).groupBy('cat').agg({ n: count(), s: sum('y') })
      : o.case === 'join'
        ? f.join(frame.readCsv(o.dim, { blocksize: Number(o.blocksize) }), { on: 'k', broadcastBytes: 0 })
        : o.case === 'sort'
          ? f.sortBy(['k', 'x'], { descending: [false, true] })
          : f.groupBy('cat', 'k').agg({ n: count(), s: sum('y'), m: mean('x'), lo: min('x'), hi: max('y') }, o.method ? { method: o.method } : {})
    const table = await client.compute(query)
    const seconds = (performance.now() - t1) / 1000
    let rows = 0
    if (o.case === 'groupby' || o.case === 'parquet-scan') for (const v of table.getChild('n')) rows += Number(v)
    else rows = table.numRows
    console.log(JSON.stringify({ seconds, startup, groups: table.numRows, rows, partitions: f.npartitions }))
  } finally {
    await client.close()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
