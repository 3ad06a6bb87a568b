import test from 'ava'
import { createHash } from 'node:crypto'
import { schedulerWorkers, SpillwayError, type Client, type Future } from 'spillway'
import { alive, cluster, until } from './cluster-helpers'

const MB = 2 ** 20

/** A compressible value of `mb` MiB whose bytes depend on `seed`. */
const block = (mb: number, seed: number) => {
  const b = Buffer.alloc(mb * 2 ** 20)
  for (let i = 0; i < b.length; i += 4096) b.writeUInt32LE((seed * 2654435761 + i) >>> 0, i)
  return b
}
const digest = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

function runsOf(client: Client, fs: Future[]): number[] {
  return fs.map((f) => client.scheduler.tasks.get(f.key)!.runs)
}

async function addresses(client: Client): Promise<[string, string]> {
  const ws = Object.keys(await schedulerWorkers(client)).sort()
  return [ws[0], ws[1]]
}

test('retireWorkers moves what a worker alone holds (spilled values as frames) and stops it; nothing is recomputed', async (t) => {
  const { client, cluster: c } = await cluster(t, { memoryTarget: 0.2, memorySpill: 0.8, memoryPause: 0.9 })
  const [a, b] = await addresses(client)
  const fs = Array.from({ length: 10 }, (_, i) => client.submit(block, [24, i], { workers: [a], pure: false }))
  await Promise.all(fs.map((f) => f.result().then(() => {})))
  const expected = Array.from({ length: 10 }, (_, i) => digest(block(24, i)))
  await client.scheduler.refreshMetrics()
  const before = (await schedulerWorkers(client))[a].metrics!
  t.true(before.spilledBytes.disk > 0, 'some of its values are spilled')
  const pid = c.scheduler.workers.get(a)!.pid

  const [report] = await client.retireWorkers([a])
  t.is(report.address, a)
  t.is(report.moved, 10)
  t.is(report.recomputed, 0)
  t.is(report.movedBytes, 10 * 24 * MB)
  await until(() => !alive(pid), 10_000, 'the retired worker to exit')
  t.deepEqual(Object.keys(await schedulerWorkers(client)), [b], 'it is gone and its nanny did not start it again')
  t.deepEqual(await client.whoHas(fs), Object.fromEntries(fs.map((f) => [f.key, [b]])))
  t.deepEqual(runsOf(client, fs), fs.map(() => 1), 'no value was made again')
  const values = (await client.gather(fs)) as Buffer[]
  t.deepEqual(values.map(digest), expected)
  await client.scheduler.refreshMetrics()
  const incoming = (await schedulerWorkers(client))[b].metrics!.transfer.incomingBytes
  // Spilled values travelled compressed, as they sat on disk.
  t.true(incoming < 10 * 24 * MB, `${incoming} bytes came in for ${10 * 24 * MB} bytes of values`)
})

test('retirement is refused when no other worker can take the values: the worker stays with them, and a later retirement succeeds', async (t) => {
  const { client } = await cluster(t, { memoryTarget: 0.3, memorySpill: 0.4, memoryPause: 0.5, memoryTerminate: 0.98 })
  const [a, b] = await addresses(client)
  const fs = Array.from({ length: 4 }, (_, i) => client.submit(block, [8, i], { workers: [a], pure: false }))
  await client.gather(fs)
  // Memory the store cannot spill (a task's own) pauses the other worker.
  const limit = client.scheduler.workers.get(b)!.memoryLimit
  await client.run((bytes: number) => {
    ;(globalThis as any).hog = Buffer.alloc(bytes, 1)
    return true
  }, [Math.floor(limit * 0.6)], { workers: [b] })
  await until(async () => (await schedulerWorkers(client))[b].metrics?.status === 'paused', 10_000, 'the other worker to pause')

  const err = await t.throwsAsync(client.retireWorkers([a]))
  t.is((err as SpillwayError).code, 'ERR_SPILLWAY_RETIRE_FAILED')
  t.regex(err!.message, /no other worker is running to take them/)
  t.regex(err!.message, new RegExp(a.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
  const w = client.scheduler.workers.get(a)!
  t.true(w.alive)
  t.is(w.status, 'running', 'it takes work again')
  t.deepEqual(await client.whoHas(fs), Object.fromEntries(fs.map((f) => [f.key, [a]])))
  const more = client.submit((x: number) => x + 1, [1], { workers: [a] })
  t.is(await more.result(), 2)
  more.release()

  await client.run(() => {
    ;(globalThis as any).hog = undefined
    ;(globalThis as any).gc?.()
    return true
  }, [], { workers: [b] })
  await until(async () => (await schedulerWorkers(client))[b].metrics?.status === 'running', 10_000, 'the other worker to resume')
  const [report] = await client.retireWorkers([a], { closeWorkers: false })
  t.is(report.moved, 4)
  t.deepEqual(await client.whoHas(fs), Object.fromEntries(fs.map((f) => [f.key, [b]])))
  t.is(client.scheduler.workers.get(a)!.status, 'closing_gracefully', 'kept, empty and idle')
  t.deepEqual((await client.gather(fs) as Buffer[]).map(digest), fs.map((_, i) => digest(block(8, i))))
})

test('retireWorkers refuses unknown workers and retiring every worker', async (t) => {
  const { client } = await cluster(t)
  const [a, b] = await addresses(client)
  const unknown = await t.throwsAsync(client.retireWorkers(['tcp://nowhere:1']))
  t.is((unknown as SpillwayError).code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.regex(unknown!.message, /workers\[0\]/)
  const all = await t.throwsAsync(client.retireWorkers([a, b]))
  t.is((all as SpillwayError).code, 'ERR_SPILLWAY_RETIRE_FAILED')
})

test('a worker paused by unmanaged memory past pausedRestart hands its values over and is restarted; the log says paused, and why', async (t) => {
  const lines: string[] = []
  const push = (m: string) => void lines.push(m)
  const logger = { info: push, warn: push, error: push, debug() {} }
  const { client } = await cluster(t, { memoryTarget: 0.3, memorySpill: 0.4, memoryPause: 0.5, memoryTerminate: 0.98, pausedRestart: 1, silenceLogs: false, logger })
  const [a, b] = await addresses(client)
  const fs = Array.from({ length: 4 }, (_, i) => client.submit(block, [8, i], { workers: [a], pure: false }))
  await client.gather(fs)
  const pid = client.scheduler.workers.get(a)!.pid
  const limit = client.scheduler.workers.get(a)!.memoryLimit
  await client.run((bytes: number) => {
    ;(globalThis as any).hog = Buffer.alloc(bytes, 1)
    return true
  }, [Math.floor(limit * 0.6)], { workers: [a] })
  await until(() => !alive(pid), 20_000, 'the paused worker to be restarted')
  await until(() => client.scheduler.workers.size === 2, 20_000, 'its next incarnation')
  t.deepEqual(await client.whoHas(fs), Object.fromEntries(fs.map((f) => [f.key, [b]])), 'its values moved before it went')
  t.deepEqual(runsOf(client, fs), fs.map(() => 1), 'nothing made again')
  t.deepEqual(((await client.gather(fs)) as Buffer[]).map(digest), fs.map((_, i) => digest(block(8, i))))
  t.true(lines.some((l) => /Pausing worker\. Process memory: .* -- Worker memory limit/.test(l)), lines.join('\n'))
  t.true(lines.some((l) => /unmanaged memory use is high/.test(l)))
  t.true(lines.some((l) => new RegExp(`${a.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*paused for \\d+ s by memory spillway cannot spill`).test(l)))
})

test('two retirements of one worker at once move each value once; the second waits on the first', async (t) => {
  const { client } = await cluster(t)
  const [a, b] = await addresses(client)
  const fs = Array.from({ length: 6 }, (_, i) => client.submit(block, [4, i], { workers: [a], pure: false }))
  await client.gather(fs)
  const [[one], [two]] = await Promise.all([client.retireWorkers([a, a], { closeWorkers: false }), client.retireWorkers([a], { closeWorkers: false })])
  t.is(one, two, 'one retirement, one report')
  t.is(one.moved, 6)
  t.deepEqual(await client.whoHas(fs), Object.fromEntries(fs.map((f) => [f.key, [b]])))
  t.deepEqual((await client.hasWhat())[a], [])
  t.deepEqual(((await client.gather(fs)) as Buffer[]).map(digest), fs.map((_, i) => digest(block(4, i))))
})
