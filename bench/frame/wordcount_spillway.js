#!/usr/bin/env node
// spillway's side of the bench/frame word count: a fresh cluster, start-up
// timed apart; prints one JSON line.
'use strict'

const path = require('node:path')
const { parseArgs } = require('node:util')
const { frame, col, count } = require('../..')
const { startBenchCluster } = require('../cluster')

const { values: o } = parseArgs({ options: { dir: { type: 'string' }, glob: { type: 'string', default: '*.txt' }, mem: { type: 'string' }, blocksize: { type: 'string' }, workers: { type: 'string', default: '2' } } })

async function main() {
  const { client } = await startBenchCluster('frame-wordcount', Number(o.workers), Number(o.mem))
  try {
    const t1 = performance.now()
    const lines = frame.readText(path.join(o.dir, o.glob), { blocksize: Number(o.blocksize) })
    const freq = lines
      .select(col('line').str.split(/[^A-Za-z0-9_]+/).explode().alias('word'))
      .filter(col('word').neq(''))
      .groupBy('word')
      .agg({ n: count() }, { splitOut: 4 })
    const table = await client.compute(freq)
    const seconds = (performance.now() - t1) / 1000
    let total = 0
    for (const v of table.getChild('n')) total += Number(v)
    console.log(JSON.stringify({ seconds, words: table.numRows, total, partitions: lines.npartitions }))
  } finally {
    await client.close()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
