// Connections that never authenticate: capped per address and in total (the
// oldest dropped first), and under the common 1024-descriptor limit a flood
// of them leaves a real worker able to join and a killed worker restarted,
// with a few summary lines in the log instead of one per connection. A
// worker's handshake cut by the flood is tried again, not taken for a wrong
// secret.
import test from 'ava'
import { spawn } from 'node:child_process'
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { join } from 'node:path'
import { setupClient } from 'spillway'
import { SUMMARY_INTERVAL_MS } from '../src/base/log-summary'
import { VERSION } from '../src/base/version'
import { removeSchedulerFile, writeSchedulerFile } from '../src/comm/scheduler-file'
import { until } from './cluster-helpers'
import { scratch } from './helpers'
import { schedulerOf } from './peer-helpers'

const BIN = join(__dirname, '..', 'bin', 'spillway.js')
const FIXTURE = join(__dirname, 'fixtures', 'flood-scheduler.cjs')

function hostPort(address: string): { host: string; port: number } {
  const u = new URL(address)
  return { host: u.hostname, port: Number(u.port) }
}

/** A connection from `localAddress` that waits for the scheduler's half of the handshake, and says nothing. */
function idle(address: string, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ ...hostPort(address), localAddress })
    s.on('error', () => {})
    s.once('data', () => resolve(s))
    s.once('close', () => reject(new Error('closed before the handshake began')))
  })
}

test('handshakes in progress are capped per address and in total, the oldest dropped first; a real worker still joins', async (t) => {
  t.timeout(120_000)
  const file = join(scratch(t), 'scheduler.json')
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1, dashboard: false, silenceLogs: true, schedulerFile: file })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const { address } = await schedulerOf(file)
  const held: Socket[] = []
  t.teardown(() => held.forEach((s) => s.destroy()))
  const closed = (s: Socket) => s.destroyed || s.readableEnded
  // One address: 16 in progress at most.
  for (let i = 0; i < 20; i++) held.push(await idle(address, '127.0.0.2'))
  await until(() => held.slice(0, 4).every(closed), 10_000, 'the 4 oldest closed')
  t.false(held.slice(4).some(closed), 'the 16 newest are kept')
  t.is(cluster.remote!.pendingHandshakes, 16)
  // Ten more addresses: 128 in total at most.
  for (let a = 3; a < 13; a++) for (let i = 0; i < 12; i++) held.push(await idle(address, `127.0.0.${a}`))
  t.is(cluster.remote!.pendingHandshakes, 128)
  const open = held.filter((s) => !closed(s))
  await until(() => held.filter((s) => !closed(s)).length === 128, 10_000, '128 left open')
  t.true(open.length >= 128)
  const survivors = held.filter((s) => !closed(s))
  t.is(survivors[0], held[held.length - 128], 'the oldest went first')
  // A real worker joins past them.
  const w = spawn(process.execPath, [BIN, 'worker', '--scheduler-file', file, '--nworkers', '1', '--max-mem-gb', '2', '--reserve-mem-gb', '1'], { stdio: 'ignore' })
  t.teardown(() => void w.kill('SIGKILL'))
  await client.waitForWorkers(2, { timeout: 60_000 })
  t.is(await client.submit((a: number, b: number) => a * b, [6, 7]).result(), 42)
})

test('a real worker whose handshake the scheduler drops, at once and after its proof, tries again and joins, without blaming its secret', async (t) => {
  t.timeout(120_000)
  const dir = scratch(t)
  const file = join(dir, 'scheduler.json')
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1, dashboard: false, silenceLogs: true, schedulerFile: file })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const { address, secret } = await schedulerOf(file)
  // In front of the scheduler, a door that drops the first connection as
  // soon as it is accepted and cuts the second once the worker has sent its
  // proof (what a scheduler shedding connections under load does to them),
  // then lets connections through.
  let n = 0
  const door = createServer((s) => {
    s.on('error', () => {})
    const i = n++
    if (i === 0) return void s.destroy()
    const up = connect(hostPort(address))
    up.on('error', () => s.destroy())
    up.on('close', () => s.destroy())
    s.on('close', () => up.destroy())
    up.pipe(s)
    if (i === 1) s.once('data', () => s.destroy())
    else s.pipe(up)
  })
  await new Promise<void>((r) => door.listen(0, '127.0.0.1', r))
  t.teardown(() => void door.close())
  // The worker reads the door's address from a scheduler file of its own; its removal says the cluster closed.
  const doorFile = join(dir, 'door.json')
  writeSchedulerFile(doorFile, { address: `tcp://127.0.0.1:${(door.address() as AddressInfo).port}`, version: VERSION, pid: process.pid }, secret)
  const w = spawn(process.execPath, [BIN, 'worker', '--scheduler-file', doorFile, '--nworkers', '1', '--max-mem-gb', '2', '--reserve-mem-gb', '1', '--temp-base-dir', dir], { stdio: ['ignore', 'ignore', 'pipe'] })
  let workerErr = ''
  w.stderr!.on('data', (c) => (workerErr += c))
  const exited = new Promise<number | null>((r) => w.once('exit', r))
  t.teardown(() => void w.kill('SIGKILL'))
  await client.waitForWorkers(2, { timeout: 60_000 })
  t.is(n, 3, 'dropped twice, joined at the third try')
  t.notRegex(workerErr, /secret|refused/, workerErr)
  const on = [...client.scheduler.workers.values()].find((h) => !h.address.startsWith('ipc:'))!
  t.is(await client.submit((a: number, b: number) => a * b, [6, 7], { workers: [on.address] }).result(), 42)
  // As a closing scheduler does: its file goes first, so the nanny takes the closed link for the end.
  removeSchedulerFile(doorFile)
  await client.close()
  await cluster.close()
  t.is(await exited, 0, workerErr)
  t.regex(workerErr, /the cluster closed/)
})

test('a flood of unauthenticated connections under a 1024-descriptor limit: a real worker joins, a killed worker is restarted, the log summarises', async (t) => {
  t.timeout(420_000)
  const dir = scratch(t)
  const file = join(dir, 'scheduler.json')
  const began = Date.now()
  const sched = spawn('prlimit', ['--nofile=1024:1024', process.execPath, FIXTURE, file], { stdio: ['pipe', 'pipe', 'pipe'] })
  t.teardown(() => void sched.kill('SIGKILL'))
  let stdout = ''
  let stderr = ''
  sched.stdout!.on('data', (c) => (stdout += c))
  sched.stderr!.on('data', (c) => (stderr += c))
  const exited = new Promise<number | null>((r) => sched.once('exit', r))
  await until(() => /^READY$/m.test(stdout), 60_000, 'the scheduler to start')
  const { address } = await schedulerOf(file)

  // FLOOD connections held open at once (more than the scheduler has
  // descriptors) from four addresses, each opened again as soon as the
  // scheduler drops it: the rate is whatever this machine sustains, and the
  // flood lasts until the scheduler has reported, so nothing below depends
  // on how fast the machine is.
  const FLOOD = 1500
  let stop = false
  let dropped = 0
  const live = new Set<Socket>()
  const open = (from: string) => {
    if (stop) return
    const s = connect({ ...hostPort(address), localAddress: from })
    live.add(s)
    // Flowing, so the scheduler's close is seen and the slot reopened.
    s.resume()
    s.on('error', () => {})
    s.once('close', () => {
      live.delete(s)
      if (stop) return
      dropped++
      setTimeout(() => open(from), 1)
    })
  }
  for (let i = 0; i < FLOOD; i++) open(`127.0.0.${2 + (i % 4)}`)
  t.teardown(() => {
    stop = true
    live.forEach((s) => s.destroy())
  })
  await until(() => dropped >= FLOOD, 120_000, 'the scheduler to drop as many flood connections as are held')

  const w = spawn(process.execPath, [BIN, 'worker', '--scheduler-file', file, '--nworkers', '1', '--max-mem-gb', '2', '--reserve-mem-gb', '1', '--temp-base-dir', dir], { stdio: ['ignore', 'ignore', 'pipe'] })
  let workerErr = ''
  w.stderr!.on('data', (c) => (workerErr += c))
  t.teardown(() => void w.kill('SIGKILL'))
  await until(() => /^RESULT /m.test(stdout), 240_000, 'the scheduler to report')
  const result = JSON.parse(/^RESULT (.*)$/m.exec(stdout)![1])
  stop = true
  live.forEach((s) => s.destroy())
  t.log(`the scheduler dropped ${dropped} flood connections while the worker joined, was killed, restarted and computed`)
  t.like(result, { joined: true, restarted: true, workers: 2, sum: Array.from({ length: 30 }, (_, i) => i * i).reduce((a, b) => a + b, 0) }, `${JSON.stringify(result)}\n${stderr.slice(-2000)}\n${workerErr.slice(-2000)}`)
  t.notRegex(stderr, /EMFILE/)
  // A handshake cut by the flood is tried again; nothing blames the secret.
  t.notRegex(workerErr, /secret/, workerErr)

  sched.stdin!.end()
  t.is(await exited, 0, stderr.slice(-2000))
  const elapsed = Date.now() - began
  // Every flood connection the scheduler closed, it closed as a refusal
  // (counted and summarised), not for want of a descriptor.
  const refused = JSON.parse(/^CLOSED (.*)$/m.exec(stdout)![1]).refused
  t.true(dropped > 0 && refused >= dropped, `refused ${refused}, dropped ${dropped}`)
  const full = stderr.split('\n').filter((l) => /refused a worker connection/.test(l))
  const summaries = stderr.split('\n').filter((l) => /\d+ more worker connections refused in the last \d+ s/.test(l))
  t.true(summaries.length >= 1, stderr.slice(-2000))
  // At most FULL_LINES full lines and one summary per interval, however many refusals.
  const intervals = Math.ceil(elapsed / SUMMARY_INTERVAL_MS) + 1
  t.true(full.length + summaries.length <= 6 * intervals, `${full.length} full lines and ${summaries.length} summaries for ${refused} refusals in ${intervals} intervals`)
})
