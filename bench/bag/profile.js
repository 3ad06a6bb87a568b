#!/usr/bin/env node
// Where a spillway run of bench/bag spends its time: runs spillway_side.js
// once with prof-hook.js preloaded through NODE_OPTIONS (the workers
// inherit it, so every process writes a V8 CPU profile; Node refuses
// --cpu-prof in NODE_OPTIONS) and prints each process's functions by
// self time.
//
//   node bench/bag/profile.js [--quick] [--case text|trivial|ndjson|files] [--corpus DIR|kernel] [--top 15]
'use strict'

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ensureData, ensureSmallFiles, corpusFiles } = require('./gen')

const argv = process.argv.slice(2)
const value = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d)
const c = value('--case', 'text')
const size = argv.includes('--quick') ? 'quick' : 'default'
const corpus = value('--corpus')
const caseArgs = c === 'files' ? ['--glob', corpus ? corpusFiles(corpus).files.glob : ensureSmallFiles(size).files.glob] : ['--manifest', path.join(ensureData(size).dir, 'manifest.json')]
const top = Number(value('--top', 15))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bag-prof-'))
const r = spawnSync(process.execPath, [path.join(__dirname, 'spillway_side.js'), '--case', c, ...caseArgs], {
  env: { ...process.env, NODE_OPTIONS: `--require=${path.join(__dirname, 'prof-hook.js')}`, SPILLWAY_BAG_PROF_DIR: dir },
  encoding: 'utf8',
})
console.log(`run: ${(r.stdout || '').trim()}${r.status ? ` (exit ${r.status}) ${r.stderr}` : ''}`)
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
  const p = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))
  const dt = new Map()
  // Self time per node from the sample deltas.
  for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0))
  const byFn = new Map()
  let total = 0
  for (const n of p.nodes) {
    const us = dt.get(n.id) ?? 0
    total += us
    const cf = n.callFrame
    const name = `${cf.functionName || '(anonymous)'} ${cf.url ? path.basename(cf.url) + ':' + (cf.lineNumber + 1) : ''}`.trim()
    byFn.set(name, (byFn.get(name) ?? 0) + us)
  }
  const idle = byFn.get('(idle)') ?? 0
  console.log(`\n${f}: ${(total / 1e6).toFixed(2)} s sampled, ${((total - idle) / 1e6).toFixed(2)} s busy`)
  for (const [name, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${(us / 1e6).toFixed(3).padStart(7)} s  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`)
}
console.log(`\nprofiles: ${dir}`)
