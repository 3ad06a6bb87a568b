#!/usr/bin/env node
// bench/transfer: bytes moved between two local spillway workers per second,
// against a plain Unix-socket stream of the same bytes between two Node
// processes, alternating the sides. spillway's figure is the time a task on
// worker B takes when its input lives on worker A, less the time the same
// task takes next to its input: what the move itself costs.
//
//   node bench/transfer/run.js [--mb 256] [--reps 5]
'use strict'
const { spawnSync } = require('node:child_process')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { parseArgs } = require('node:util')
const { setupClient, schedulerWorkers } = require('../..')
const { timeMove } = require('./move')

const { values } = parseArgs({ options: { mb: { type: 'string', default: '256' }, reps: { type: 'string', default: '5' } } })
const MB = Number(values.mb)
const REPS = Number(values.reps)

function plain() {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-bench-'))
  try {
    const r = spawnSync(process.execPath, [join(__dirname, 'plain-stream.js'), join(dir, 's.sock'), String(MB)], { encoding: 'utf8' })
    return JSON.parse(r.stdout).seconds
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]
const fmt = (xs) => `min ${Math.min(...xs).toFixed(0)} / median ${median(xs).toFixed(0)} / max ${Math.max(...xs).toFixed(0)} MB/s`

async function main() {
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, silenceLogs: true, dashboard: false })
  const [a, b] = Object.keys(await schedulerWorkers(client))
  const rates = { spillway: [], plain: [] }
  const bytes = MB * 2 ** 20
  try {
    for (let r = 0; r < REPS; r++) {
      // Alternate which side goes first.
      const order = r % 2 ? ['plain', 'spillway'] : ['spillway', 'plain']
      for (const side of order) {
        const s = side === 'plain' ? plain() : await timeMove(client, a, b, MB, r)
        rates[side].push(bytes / s / 1e6)
      }
    }
  } finally {
    await client.close()
    await cluster.close()
  }
  console.log(`transfer of ${MB} MiB between two local workers, ${REPS} alternating repetitions`)
  console.log(`  spillway worker -> worker : ${fmt(rates.spillway)}`)
  console.log(`  plain Unix-socket stream  : ${fmt(rates.plain)}`)
  console.log(`  ratio (median)            : ${(median(rates.spillway) / median(rates.plain)).toFixed(2)}x (target >= 0.5x)`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
