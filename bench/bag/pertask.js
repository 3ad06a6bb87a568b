#!/usr/bin/env node
// The per-task path of a bag partition, before and after a change: runs
// spillway_side.js's cases (steps: map → filter → count; foldby; text:
// filter → count) with two builds of spillway, sides alternating, on the
// Node binaries given, and prints each side's min / median / max and the
// after/before ratio of medians.
//
//   node bench/bag/pertask.js --before DIR [--after DIR] [--node BIN,BIN] [--cases steps,foldby,text] [--reps 5] [--quick] [--blocksize 16MiB]
//
// DIR is a spillway package root with its dist/ built (e.g. a copy of this
// checkout's package.json, index.js, *.node and dist/ made before the change).
'use strict'

const { spawnSync } = require('node:child_process')
const path = require('node:path')
const { ensureData } = require('./gen')
const { busyShare, LOADED } = require('../load')
const { flag, value } = require('../args')

const before = value('--before')
if (!before) throw new Error('--before DIR is required')
const after = value('--after') ?? path.resolve(__dirname, '..', '..')
const nodes = (value('--node') ?? process.execPath).split(',')
const cases = (value('--cases') ?? 'steps,foldby,text').split(',')
const reps = Number(value('--reps') ?? 5)
const blocksize = value('--blocksize') ?? '16MiB'
const m = ensureData(flag('--quick') ? 'quick' : 'default')
const manifest = path.join(m.dir, 'manifest.json')

function once(node, root, c) {
  const r = spawnSync(node, [path.join(__dirname, 'spillway_side.js'), '--case', c, '--manifest', manifest, '--blocksize', blocksize, '--root', root], { encoding: 'utf8', timeout: 10 * 60_000 })
  const last = (r.stdout || '').trim().split('\n').pop()
  if (r.status !== 0 || !last) throw new Error(`${c} on ${root} failed: ${(r.stderr || '').slice(-500)}`)
  return JSON.parse(last)
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const k = s.length >> 1
  return { min: s[0], median: s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2, max: s[s.length - 1] }
}

const results = []
for (const node of nodes) {
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()
  for (const c of cases) {
    const sides = { before: [], after: [] }
    let loaded = 0
    let answer
    for (let rep = 0; rep < reps; rep++) {
      for (const side of rep % 2 ? ['after', 'before'] : ['before', 'after']) {
        if (busyShare() > LOADED) loaded++
        const out = once(node, side === 'before' ? before : after, c)
        const a = JSON.stringify(out.answer)
        if (answer !== undefined && a !== answer) throw new Error(`${c}: ${side} answered ${a}, the other side ${answer}`)
        answer = a
        sides[side].push(out.seconds)
      }
    }
    const b = stats(sides.before)
    const a = stats(sides.after)
    results.push({ node: version, case: c, before: b, after: a, ratio: a.median / b.median, loadedRuns: loaded })
    const f = (s) => `${s.min.toFixed(2)} / ${s.median.toFixed(2)} / ${s.max.toFixed(2)}`
    console.log(`node ${version} ${c.padEnd(7)} before ${f(b)} s  after ${f(a)} s  after/before ${(a.median / b.median).toFixed(3)}  (${reps} reps each, ${loaded} runs started on a loaded machine)`)
  }
}
if (flag('--json')) console.log(JSON.stringify(results, null, 2))
