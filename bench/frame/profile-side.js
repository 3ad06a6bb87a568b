#!/usr/bin/env node
// Where a bench/frame case's time goes in every process: spillway_side.js
// run once with bench/bag/prof-hook.js preloaded (V8's sampling profiler in
// the client and each worker), then each process's self time per function.
//
//   node bench/frame/profile-side.js --case parquet-scan|sort|join|groupby [--quick] [--top N]
'use strict'

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { selfTimes } = require('../bag/cpuprofile')
const { parseArgs } = require('node:util')
const { ensureData } = require('./gen')

const { values: o } = parseArgs({ options: { case: { type: 'string', default: 'parquet-scan' }, quick: { type: 'boolean' }, top: { type: 'string', default: '12' } }, strict: false })
const data = ensureData(o.quick ? { tag: 'quick', bytes: 60e6, files: 6, keys: 5000 } : { tag: 'default', bytes: 600e6, files: 24, keys: 50000 })
const dir = o.case === 'parquet-scan' ? path.join(data.dir, 'parquet') : data.dir
const dim = o.case === 'join' ? ['--dim', path.join(data.dir, '..', `dim-${o.quick ? 5000 : 50000}.csv`)] : []
const prof = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-frame-prof-'))
const r = spawnSync(process.execPath, [path.join(__dirname, 'spillway_side.js'), '--dir', dir, '--case', o.case, '--mem', String(2 ** 30), '--blocksize', String((o.quick ? 8 : 32) * 2 ** 20), ...dim], {
  env: { ...process.env, NODE_OPTIONS: `--require=${path.join(__dirname, '..', 'bag', 'prof-hook.js')}`, SPILLWAY_BAG_PROF_DIR: prof },
  encoding: 'utf8',
})
console.log(`run: ${(r.stdout || '').trim()}${r.status ? ` (exit ${r.status}) ${r.stderr}` : ''}`)
for (const f of fs.readdirSync(prof).filter((f) => f.endsWith('.cpuprofile'))) {
  const p = JSON.parse(fs.readFileSync(path.join(prof, f), 'utf8'))
  const { byFn, total, idle } = selfTimes(p)
  console.log(`\n${f}: ${(total / 1e6).toFixed(2)} s sampled, ${((total - idle) / 1e6).toFixed(2)} s busy on the JS thread`)
  for (const [name, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, Number(o.top))) console.log(`  ${(us / 1e6).toFixed(3).padStart(7)} s  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`)
}
fs.rmSync(prof, { recursive: true, force: true })
