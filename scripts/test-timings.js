#!/usr/bin/env node
// Prints the slowest specs of a run from the timings file the lanes write
// (__test__/lanes/timing.cjs: `seconds<TAB>lane<TAB>spec` per spec file),
// and each lane's total of spec time.
//
//   node scripts/test-timings.js test-timings.tsv [--top 10]
'use strict'
const { readFileSync } = require('node:fs')
const { parseArgs } = require('node:util')

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '10' } } })
const file = positionals[0]
if (file === undefined) {
  console.error('usage: node scripts/test-timings.js FILE [--top N]')
  process.exit(2)
}
const top = Number(values.top)
if (!Number.isInteger(top) || top < 1) {
  console.error(`--top must be a whole number of at least 1, not ${values.top}`)
  process.exit(2)
}
const rows = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [seconds, lane, spec] = line.split('\t')
    return { seconds: Number(seconds), lane, spec }
  })
const lanes = new Map()
for (const r of rows) lanes.set(r.lane, (lanes.get(r.lane) ?? 0) + r.seconds)
console.log(`${rows.length} spec files timed; spec time by lane: ${[...lanes].map(([l, s]) => `${l} ${s.toFixed(0)} s`).join(', ')}`)
console.log(`the ${Math.min(top, rows.length)} slowest:`)
for (const r of rows.sort((a, b) => b.seconds - a.seconds).slice(0, top)) console.log(`${r.seconds.toFixed(1).padStart(7)} s  ${r.lane.padEnd(8)} ${r.spec}`)
