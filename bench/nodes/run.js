#!/usr/bin/env node
// bench/nodes: spillway across "nodes" — Linux network namespaces on a
// bridge, `spillway worker` in each (root only).
//  1. Scheduler overhead: the time per tiny task of --tasks tasks on 64
//     workers in 16 namespaces, against the same tasks on 2 local workers.
//  2. Transfer: a --mb MiB value moved from a worker in one namespace to a
//     worker in another, against a plain TCP stream of the same bytes
//     between two Node processes in those namespaces (target >= 0.5x).
// Repetitions alternate the sides; min / median / max are printed.
//
//   node bench/nodes/run.js [--namespaces 16] [--per-node 4] [--tasks 100000] [--mb 256] [--reps 3]
'use strict'
const { spawn, spawnSync } = require('node:child_process')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { parseArgs } = require('node:util')
const { setupClient } = require('../..')
const { timeMove } = require('../transfer/move')

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '16' },
    'per-node': { type: 'string', default: '4' },
    tasks: { type: 'string', default: '100000' },
    mb: { type: 'string', default: '256' },
    reps: { type: 'string', default: '3' },
  },
})
const NS = Number(values.namespaces)
const PER = Number(values['per-node'])
const TASKS = Number(values.tasks)
const MB = Number(values.mb)
const REPS = Number(values.reps)
const BIN = join(__dirname, '..', '..', 'bin', 'spillway.js')
const NET = '10.232.0'
const BRIDGE = 'spwbench0'
const nodes = Array.from({ length: NS }, (_, i) => ({ ns: `spwb${i}`, veth: `spwbv${i}`, ip: `${NET}.${10 + i}`, host: `bench${i}` }))
const now = () => Number(process.hrtime.bigint()) / 1e9
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (xs, unit, d = 1) => `min ${Math.min(...xs).toFixed(d)} / median ${median(xs).toFixed(d)} / max ${Math.max(...xs).toFixed(d)} ${unit}`

function sh(cmd) {
  const r = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`${cmd.join(' ')}: ${r.stderr}`)
}

function network() {
  sh(['ip', 'link', 'add', BRIDGE, 'type', 'bridge'])
  sh(['ip', 'addr', 'add', `${NET}.1/24`, 'dev', BRIDGE])
  sh(['ip', 'link', 'set', BRIDGE, 'up'])
  for (const n of nodes) {
    sh(['ip', 'netns', 'add', n.ns])
    sh(['ip', 'link', 'add', n.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', n.ns])
    sh(['ip', 'link', 'set', n.veth, 'master', BRIDGE])
    sh(['ip', 'link', 'set', n.veth, 'up'])
    sh(['ip', '-n', n.ns, 'addr', 'add', `${n.ip}/24`, 'dev', 'eth0'])
    sh(['ip', '-n', n.ns, 'link', 'set', 'eth0', 'up'])
    sh(['ip', '-n', n.ns, 'link', 'set', 'lo', 'up'])
  }
}

function teardown() {
  for (const n of nodes) spawnSync('ip', ['netns', 'del', n.ns])
  spawnSync('ip', ['link', 'del', BRIDGE])
}

async function tiny(client) {
  const t0 = now()
  const fs = client.map((i) => i + 1, Array.from({ length: TASKS }, (_, i) => i), { pure: false })
  const out = await client.gather(fs)
  const s = now() - t0
  for (const f of fs) f.release()
  if (out[TASKS - 1] !== TASKS) throw new Error('wrong result')
  return (s / TASKS) * 1e6
}

function plainTcp(a, b) {
  const port = 40000 + Math.floor(Math.random() * 20000)
  const recv = spawn('ip', ['netns', 'exec', b.ns, process.execPath, join(__dirname, 'plain-tcp.js'), 'recv', b.ip, String(port), String(MB)], { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    recv.stdout.on('data', (c) => {
      out += c
      if (out.startsWith('ready\n') && !recv.sent) {
        recv.sent = true
        spawn('ip', ['netns', 'exec', a.ns, process.execPath, join(__dirname, 'plain-tcp.js'), 'send', b.ip, String(port), String(MB)], { stdio: 'inherit' })
      }
    })
    recv.on('exit', () => {
      try {
        resolve(JSON.parse(out.split('\n')[1]).seconds)
      } catch (e) {
        reject(new Error(`plain tcp: ${out}`))
      }
    })
  })
}

async function main() {
  if (process.getuid?.() !== 0) throw new Error('bench/nodes needs root (network namespaces)')
  teardown()
  network()
  const dir = mkdtempSync(join(tmpdir(), 'spillway-bench-nodes-'))
  const children = []
  const local = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false, silenceLogs: true })
  const file = join(dir, 'scheduler.json')
  const remote = await setupClient({ dashboard: false, silenceLogs: true, schedulerFile: file, schedulerAddress: `tcp://${NET}.1:0`, localWorkers: 0, maxMemGb: 2, reserveMemGb: 0 })
  try {
    const t0 = now()
    for (const n of nodes) {
      const cmd = `hostname ${n.host} && exec ${process.execPath} ${BIN} worker --scheduler-file ${file} --host ${n.ip} --nworkers ${PER} --threads-per-worker 1 --max-mem-gb ${PER} --reserve-mem-gb 0 --temp-base-dir ${dir}`
      children.push(spawn('ip', ['netns', 'exec', n.ns, 'unshare', '--uts', 'sh', '-c', cmd], { detached: true, stdio: 'ignore' }))
    }
    await remote.client.waitForWorkers(NS * PER, { timeout: 180_000 })
    console.log(`${NS * PER} workers in ${NS} namespaces joined in ${(now() - t0).toFixed(1)} s`)
    const perTask = { local: [], nodes: [] }
    for (let r = 0; r < REPS; r++) {
      for (const side of r % 2 ? ['nodes', 'local'] : ['local', 'nodes']) perTask[side].push(await tiny(side === 'local' ? local.client : remote.client))
    }
    const byHost = new Map([...remote.client.scheduler.workers.values()].map((w) => [w.host, w.address]))
    const [a, b] = [nodes[0], nodes[1]]
    const rates = { spillway: [], plain: [] }
    for (let r = 0; r < REPS; r++) {
      for (const side of r % 2 ? ['plain', 'spillway'] : ['spillway', 'plain']) {
        const s = side === 'plain' ? await plainTcp(a, b) : await timeMove(remote.client, byHost.get(a.host), byHost.get(b.host), MB, r)
        rates[side].push((MB * 2 ** 20) / s / 1e6)
      }
    }
    console.log(`scheduler overhead: ${TASKS} tiny tasks, ${REPS} alternating repetitions`)
    console.log(`  2 local workers                 : ${fmt(perTask.local, 'µs/task')}`)
    console.log(`  ${NS * PER} workers in ${NS} namespaces     : ${fmt(perTask.nodes, 'µs/task')}`)
    console.log(`  ratio (median, namespaces/local): ${(median(perTask.nodes) / median(perTask.local)).toFixed(2)}x`)
    console.log(`transfer of ${MB} MiB between workers in two namespaces over TCP`)
    console.log(`  spillway worker -> worker : ${fmt(rates.spillway, 'MB/s', 0)}`)
    console.log(`  plain TCP stream          : ${fmt(rates.plain, 'MB/s', 0)}`)
    console.log(`  ratio (median)            : ${(median(rates.spillway) / median(rates.plain)).toFixed(2)}x (target >= 0.5x)`)
  } finally {
    await local.client.close()
    await local.cluster.close()
    await remote.client.close()
    await remote.cluster.close()
    for (const c of children) {
      try {
        process.kill(-c.pid, 'SIGKILL')
      } catch {}
    }
    teardown()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  teardown()
  process.exit(1)
})
