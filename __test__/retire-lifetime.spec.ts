// A worker started elsewhere with --lifetime retires gracefully under load:
// its values move to the other worker before it leaves, nothing is made
// again, and work submitted meanwhile all finishes.
import test from 'ava'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { schedulerWorkers, setupClient } from 'spillway'
import { until } from './cluster-helpers'

const BIN = join(__dirname, '..', 'bin', 'spillway.js')

test('--lifetime: the worker hands its values over before it leaves, under load; its process ends', async (t) => {
  t.timeout(3 * 60_000)
  const dir = mkdtempSync(join(tmpdir(), 'spillway-lifetime-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'scheduler.json')
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 1.5, reserveMemGb: 0, dashboard: false, silenceLogs: true, schedulerFile: file, memoryTarget: 0.3, memorySpill: 0.8, memoryPause: 0.9 })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const [local] = Object.keys(await schedulerWorkers(client))
  const child = spawn(process.execPath, [BIN, 'worker', '--scheduler-file', file, '--nworkers', '1', '--max-mem-gb', '1.5', '--reserve-mem-gb', '0', '--temp-base-dir', dir, '--lifetime', '8'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (c) => (stderr += c))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  t.teardown(() => void child.kill('SIGKILL'))
  await client.waitForWorkers(2, { timeout: 60_000 })
  const remote = Object.keys(await schedulerWorkers(client)).find((a) => a !== local)!

  // Values on the worker that will leave, part of them spilled.
  const make = (mb: number, seed: number) => Buffer.alloc(mb * 2 ** 20, seed)
  const held = Array.from({ length: 12 }, (_, i) => client.submit(make, [32, i], { workers: [remote], pure: false }))
  await Promise.all(held.map((f) => f.result().then(() => {})))
  // Load while it retires: tasks keep coming, on both workers.
  const sleepy = async (i: number) => {
    await new Promise((r) => setTimeout(r, 100))
    return i * 2
  }
  const load: Promise<number>[] = []
  const stopLoad = setInterval(() => load.push(client.submit(sleepy, [load.length], { pure: false }).result()), 50)
  await until(() => !client.scheduler.workers.has(remote), 60_000, 'the worker to retire')
  clearInterval(stopLoad)
  t.is(await exited, 0, stderr)
  t.regex(stderr, /retires after its lifetime/)
  t.regex(stderr, /retired by the scheduler/)

  const where = await client.whoHas(held)
  t.deepEqual(Object.values(where), held.map(() => [local]), 'every value is on the worker that stays')
  t.deepEqual(held.map((f) => client.scheduler.tasks.get(f.key)!.runs), held.map(() => 1), 'none was made again')
  const values = (await client.gather(held)) as Buffer[]
  t.deepEqual(values.map((v) => [v.length, v[0], v[v.length - 1]]), held.map((_, i) => [32 * 2 ** 20, i, i]))
  const results = await Promise.all(load)
  t.true(results.length > 10)
  t.deepEqual(results, results.map((_, i) => i * 2))
})
