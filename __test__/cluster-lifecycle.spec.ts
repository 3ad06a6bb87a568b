import test from 'ava'
import { execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { random, schedulerWorkers, setupClient } from 'spillway'
import { alive, PRESSURE, until } from './cluster-helpers'

test('close stops every worker and removes the spill directory; closing twice is harmless', async (t) => {
  const { client, cluster, tempDir } = await setupClient(PRESSURE)
  const x = await client.persist(random.random([6_000, 6_000], { chunks: 1_000, seed: 3 }))
  await x.wait()
  const pids = Object.values(await schedulerWorkers(client)).map((w) => w.pid)
  t.is(pids.length, 2)
  t.true(pids.every(alive))
  t.true(existsSync(tempDir))
  await client.close()
  await cluster.close()
  await cluster.close()
  await client.close()
  await until(() => pids.every((p) => !alive(p)), 5_000, 'workers to exit')
  t.false(existsSync(tempDir))
  await t.throwsAsync(() => client.compute(x.sum()), { code: 'ERR_SPILLWAY_CLOSED' })
})

test('await using closes the cluster', async (t) => {
  let dir = ''
  let pids: number[] = []
  {
    await using setup = await setupClient(PRESSURE)
    dir = setup.tempDir
    pids = Object.values(await schedulerWorkers(setup.client)).map((w) => w.pid)
  }
  t.false(existsSync(dir))
  await until(() => pids.every((p) => !alive(p)), 5_000, 'workers to exit')
})

test('a crash of the calling process leaves no worker running', async (t) => {
  const script = `
    const { setupClient, schedulerWorkers } = require('spillway')
    setupClient(${JSON.stringify(PRESSURE)}).then(async ({ client }) => {
      const pids = Object.values(await schedulerWorkers(client)).map((w) => w.pid)
      console.log(JSON.stringify(pids))
      process.kill(process.pid, 'SIGKILL')
    })`
  const child = spawn(process.execPath, ['-e', script], { cwd: join(__dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  await new Promise((r) => child.once('exit', r))
  const pids: number[] = JSON.parse(out.trim().split('\n').pop()!)
  t.is(pids.length, 2)
  await until(() => pids.every((p) => !alive(p)), 10_000, 'orphaned workers to exit')
  t.pass()
})

test('an unknown codec is rejected when the config is made, listing the valid ones', async (t) => {
  const err = await t.throwsAsync(() => setupClient({ ...PRESSURE, spillCompression: 'brotli' }))
  t.is((err as any).code, 'ERR_SPILLWAY_INVALID_CONFIG')
  t.regex(err!.message, /spillCompression/)
  t.regex(err!.message, /lz4/)
})

void execFile
