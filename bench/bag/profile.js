#!/usr/bin/env node
// Where a spillway run of bench/bag spends its time: runs spillway_side.js
// once with prof-hook.js preloaded through NODE_OPTIONS (the workers
// inherit it, so every process writes a V8 CPU profile; Node refuses
// --cpu-prof in NODE_OPTIONS) and prints each process's functions by
// self time.
//
//   node bench/bag/profile.js [--quick] [--case text|trivial|ndjson|steps|foldby|files] [--corpus DIR|kernel] [--top 15] [--root DIR] [--blocksize 64MiB]
//
// Each worker's busy time is also summed by kind: GC, async_hooks (promise
// hooks of AsyncLocalStorage), line decoding and splitting, the step loop
// with the user's functions (inlined into it), and the rest.
'use strict'

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { selfTimes } = require('./cpuprofile')
const { ensureData, ensureSmallFiles, corpusFiles } = require('./gen')

const argv = process.argv.slice(2)
const value = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d)
const c = value('--case', 'text')
const size = argv.includes('--quick') ? 'quick' : 'default'
const corpus = value('--corpus')
const caseArgs = c === 'files' ? ['--glob', corpus ? corpusFiles(corpus).files.glob : ensureSmallFiles(size).files.glob] : ['--manifest', path.join(ensureData(size).dir, 'manifest.json')]
const top = Number(value('--top', 15))
/** What a frame's self time is spent on, for the summary; undefined for idle. */
function kindOf({ functionName: fn, url = '' }) {
  if (fn === '(idle)') return undefined
  if (fn === '(garbage collector)') return 'GC'
  if (/async_hooks|promise_hooks|async_context_frame|async_local_storage/.test(url) || /^(promiseInitHook|promiseBeforeHook|promiseAfterHook|promiseResolveHook|emitInit|emitBefore|emitAfter|trackPromise|fastPromiseHook|propagate)/.test(fn)) return 'async_hooks'
  // A text block's push loop (each) has the steps and the user's functions inlined into it.
  if (fn === 'each' || fn === 'eachItem') return 'step loop+user functions'
  if ((fn === 'slice' && /buffer/.test(url)) || /text-blocks|text-decode/.test(url)) return 'line decoding+splitting'
  if (/partition\.js|reducers\.js|async-steps|items\.js|key-equality|context\.js/.test(url) || /\/fixtures\/|spillway_side/.test(url)) return 'step loop+user functions'
  return 'other'
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bag-prof-'))
const extra = ['--root', '--blocksize'].flatMap((n) => (value(n) ? [n, value(n)] : []))
const r = spawnSync(process.execPath, [path.join(__dirname, 'spillway_side.js'), '--case', c, ...caseArgs, ...extra], {
  env: { ...process.env, NODE_OPTIONS: `--require=${path.join(__dirname, 'prof-hook.js')}`, SPILLWAY_BAG_PROF_DIR: dir },
  encoding: 'utf8',
})
console.log(`run: ${(r.stdout || '').trim()}${r.status ? ` (exit ${r.status}) ${r.stderr}` : ''}`)
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
  const p = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))
  const { dt, byFn, total, idle } = selfTimes(p)
  console.log(`\n${f}: ${(total / 1e6).toFixed(2)} s sampled, ${((total - idle) / 1e6).toFixed(2)} s busy`)
  const kinds = new Map()
  for (const n of p.nodes) {
    const k = kindOf(n.callFrame)
    if (k) kinds.set(k, (kinds.get(k) ?? 0) + (dt.get(n.id) ?? 0))
  }
  console.log(`  busy by kind: ${[...kinds].sort((a, b) => b[1] - a[1]).map(([k, us]) => `${k} ${((100 * us) / (total - idle)).toFixed(1)}%`).join(', ')}`)
  for (const [name, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${(us / 1e6).toFixed(3).padStart(7)} s  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`)
}
console.log(`\nprofiles: ${dir}`)
