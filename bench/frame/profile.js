#!/usr/bin/env node
// Where a frame group-by's time goes, kernel by kernel, on one thread (the
// core called directly, no cluster): schema sampling, reading one CSV block
// into Arrow batches, the same plus the partial aggregation, IPC bytes out,
// and merging the partial states of every block. Prints one JSON line.
//
//   node bench/frame/profile.js [--quick]
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const native = require('../../index.js')
const { ensureData } = require('./gen')

const { values: opts } = parseArgs({ options: { quick: { type: 'boolean' } }, strict: false })
const SIZE = opts.quick ? { tag: 'quick', bytes: 60e6, files: 6, keys: 5000 } : { tag: 'default', bytes: 600e6, files: 24, keys: 50000 }
const BLOCK = 32 * 2 ** 20
const csv = { delimiter: ',', quote: '"', nullValues: [''], header: true }
const agg = { keys: ['cat', 'k'], aggs: [{ name: 'n', func: 'count' }, { name: 's', func: 'sum', column: 'y' }, { name: 'm', func: 'mean', column: 'x' }, { name: 'lo', func: 'min', column: 'x' }, { name: 'hi', func: 'max', column: 'y' }] }

async function main() {
  const data = ensureData(SIZE)
  const files = fs.readdirSync(data.dir).filter((f) => f.endsWith('.csv')).map((f) => path.join(data.dir, f))
  let t = performance.now()
  const schema = JSON.parse(native.frameInferCsv(files, JSON.stringify(csv), 2 ** 20))
  const inferMs = performance.now() - t
  const size = fs.statSync(files[0]).size
  const plan = (partial) => JSON.stringify({ source: { kind: 'csv', path: files[0], start: 0, end: Math.min(size, BLOCK), options: csv }, schema, steps: [], ...(partial ? { partial: agg } : {}) })
  t = performance.now()
  const batches = await native.frameRunPartition(plan(false), [])
  const readMs = performance.now() - t
  t = performance.now()
  const partial = await native.frameRunPartition(plan(true), [])
  const readAggMs = performance.now() - t
  t = performance.now()
  await native.frameRunPartition(JSON.stringify({ source: { kind: 'inputs' }, schema, steps: [], partial: agg }), [batches])
  const aggOnlyMs = performance.now() - t
  const partials = Array.from({ length: Math.ceil(data.files * Math.max(1, size / BLOCK)) }, () => partial)
  t = performance.now()
  const merged = await native.frameRunCombine(JSON.stringify({ agg, final: true }), partials)
  const mergeMs = performance.now() - t
  const mb = Math.min(size, BLOCK) / 1e6
  console.log(JSON.stringify({ blockMB: mb, inferMs, readMs, readMBps: mb / (readMs / 1000), readAggMs, aggOnlyMs, ipcBytes: batches.length, partialBytes: partial.length, merge: { inputs: partials.length, ms: mergeMs, outBytes: merged.length } }))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
