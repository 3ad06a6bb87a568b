#!/usr/bin/env node
// `npm run bench`: every comparison under bench/, one after the other (they
// share 2 cores, so never in parallel), each printing its table of ratios.
const { spawnSync } = require('node:child_process')
const { existsSync } = require('node:fs')
const { join } = require('node:path')

const suites = ['core', 'limit', 'dask', 'transfer', 'bag', 'shuffle', 'rechunk'].filter((s) => existsSync(join(__dirname, s, 'run.js')))
let failed = 0
for (const s of suites) {
  console.log(`\n=== bench/${s}`)
  const r = spawnSync(process.execPath, [join(__dirname, s, 'run.js'), ...process.argv.slice(2)], { stdio: 'inherit' })
  if (r.status !== 0) {
    console.error(`bench/${s} exited with ${r.status ?? r.signal}`)
    failed++
  }
}
process.exitCode = failed ? 1 : 0
