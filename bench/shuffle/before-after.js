#!/usr/bin/env node
// bench/shuffle/before-after: spillway's groupBy and join of bench/shuffle
// (spillway_side.js, same data and workers) from two checkouts — e.g. the
// commit before a change and this tree — sides alternating per repetition;
// prints each run and the ratio after / before (min / median / max). Each
// checkout must be built (dist, the native addon).
//
//   node bench/shuffle/before-after.js --before DIR [--after .] [--cases groupby,join] [--reps 3]
//        [--data DIR] [--mem BYTES] [--blocksize BYTES]
'use strict'

const path = require('node:path')
const { parseArgs } = require('node:util')
const { runProc } = require('../proc')

const { values: o } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string', default: path.join(__dirname, '..', '..') },
    cases: { type: 'string', default: 'groupby,join' },
    reps: { type: 'string', default: '3' },
    data: { type: 'string', default: path.join(require('node:os').tmpdir(), 'spillway-bench-shuffle', 'quick') },
    mem: { type: 'string', default: String(512 * 2 ** 20) },
    blocksize: { type: 'string', default: String(16 * 2 ** 20) },
  },
})
if (!o.before) throw new Error('--before DIR: a built checkout to compare against')

async function side(root, c) {
  const args = [path.join(root, 'bench', 'shuffle', 'spillway_side.js'), '--case', c, '--dir', o.data, '--mem', o.mem, '--blocksize', o.blocksize, '--workers', '2']
  return runProc(process.execPath, args, process.env, 900)
}

async function main() {
  const load = require('node:os').loadavg()
  console.log(`before ${o.before}, after ${o.after}; data ${o.data}; 2 × ${Number(o.mem) / 2 ** 20} MiB workers; load ${load.map((l) => l.toFixed(2)).join(' ')}`)
  for (const c of o.cases.split(',')) {
    const ratios = []
    const cpuRatios = []
    for (let r = 0; r < Number(o.reps); r++) {
      const order = r % 2 ? ['after', 'before'] : ['before', 'after']
      const got = {}
      for (const s of order) {
        got[s] = await side(o[s], c)
        const g = got[s]
        console.log(`${c} rep ${r + 1} ${s}: ${g.error ? `error ${g.error}` : `${g.seconds.toFixed(2)} s, worker cpu ${g.workerCpuSeconds?.toFixed(2)} s, peak rss ${(Math.max(...Object.values(g.peakRss ?? { x: 0 })) / 2 ** 20).toFixed(0)} MiB, restarts ${JSON.stringify(g.restarts)}, answer ${JSON.stringify(g.answer)}`}`)
      }
      if (!got.before.error && !got.after.error) {
        ratios.push(got.after.seconds / got.before.seconds)
        if (got.before.workerCpuSeconds) cpuRatios.push(got.after.workerCpuSeconds / got.before.workerCpuSeconds)
      }
    }
    for (const [what, list] of [['wall', ratios], ['worker cpu', cpuRatios]]) {
      const s = [...list].sort((a, b) => a - b)
      if (s.length) console.log(`${c}: ${what} after / before ${s[0].toFixed(2)} / ${s[s.length >> 1].toFixed(2)} / ${s[s.length - 1].toFixed(2)} (min / median / max of ${s.length})`)
    }
  }
  console.log(`load after ${require('node:os').loadavg().map((l) => l.toFixed(2)).join(' ')}`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
