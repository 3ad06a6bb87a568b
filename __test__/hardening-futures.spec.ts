// Futures across restarts and moves: Dask's own tests (test_restart,
// test_scheduler_restart_exception_on_cancelled_futures, test_rebalance_unprepared,
// test_scatter_direct_balanced / spread_evenly, test_repeated_restarts),
// ported and run as a user would, with real worker processes.

import test from 'ava'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, clusterReport, random, setupClient, SpillwayError, wait, type Client } from 'spillway'
import { alive, cluster, sharedCluster, until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks')
const esm = (name: string) => ({ module: join(FIX, 'esm.mjs'), name })
const inc = (x: number) => x + 1

// One cluster for the tests that neither restart, retire nor kill a worker
// (the same workers as cluster()'s); the tests run one at a time.
let client!: Client
sharedCluster(test, (c) => (client = c), { reserveMemGb: 1 })

/** How many of the keys each worker holds, by address. */
async function spread(client: Client, keys: { key: string }[]): Promise<number[]> {
  const where = await client.whoHas(keys)
  const count = new Map(Object.keys(client.nthreads()).map((a) => [a, 0]))
  for (const k of keys) for (const a of where[k.key]) count.set(a, count.get(a)! + 1)
  return [...count.values()].sort((a, b) => a - b)
}

test.serial('restart cancels every Future, a failed one too, and the scheduler forgets every key: whoHas() names none, new work runs', async (t) => {
  // Its own cluster: it restarts the cluster.
  const { client } = await cluster(t)
  const futures = client.map(inc, Array.from({ length: 20 }, (_, i) => i))
  const failed = client.submit(esm('boom'), ['before the restart'])
  await wait([...futures, failed])
  t.is(failed.status, 'error')
  t.deepEqual(Object.keys(await client.whoHas()).sort(), [...futures.map((f) => f.key), failed.key].sort())

  await client.restart()
  t.deepEqual(await client.whoHas(), {}, 'no key outlives the restart')
  t.is(client.scheduler.tasks.size, 0)
  t.deepEqual(await client.whoHas(futures.slice(0, 2)), { [futures[0].key]: [], [futures[1].key]: [] })
  for (const f of [...futures, failed]) t.is(f.status, 'cancelled', f.key)
  const err = (await t.throwsAsync(futures[0].result())) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_CANCELLED')
  t.regex(err.message, /client\.restart\(\) restarted the cluster/)
  t.is(((await failed.exception()) as SpillwayError).code, 'ERR_SPILLWAY_CANCELLED')
  t.is(await client.submit(inc, [1]).result(), 2)
})

test.serial('a Future made before restart and released after leaves the new Future of its key alone; the old ones stay cancelled when the key runs again', async (t) => {
  // Its own cluster: it restarts the cluster.
  const { client } = await cluster(t)
  const old = client.submit(inc, [41], { key: 'same-key' })
  const twin = client.submit(inc, [41], { key: 'same-key' })
  const oldFail = client.submit(esm('boom'), ['old'], { key: 'failing-key' })
  t.is(await old.result(), 42)
  await oldFail.settled()
  await client.restart()

  const fresh = client.submit(inc, [1], { key: 'same-key' })
  const freshFail = client.submit(inc, [2], { key: 'failing-key' })
  t.is(await fresh.result(), 2)
  t.is(await freshFail.result(), 3)
  // The new generation is finished; the old Futures of the same keys are not.
  for (const f of [old, twin, oldFail]) t.is(f.status, 'cancelled', f.key)
  t.is(((await t.throwsAsync(old.result())) as SpillwayError).code, 'ERR_SPILLWAY_CANCELLED')

  // An old Future cannot stand for the new value as an argument, nor cancel it.
  const arg = (await t.throwsAsync(async () => client.submit(inc, [oldFail]))) as SpillwayError
  t.is(arg.code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.regex(arg.message, /before client\.restart\(\)/)
  oldFail.cancel()
  t.is(freshFail.status, 'finished')

  old.release()
  twin.release()
  oldFail.release()
  t.is(client.scheduler.tasks.get('same-key')?.refs, 1, "the new Future's hold is still there")
  t.is(await fresh.result(), 2)
  t.is(await freshFail.result(), 3)
  t.deepEqual(Object.keys(await client.whoHas()).sort(), ['failing-key', 'same-key'])
})

test.serial('a failed key submitted again is a new generation: the old Future stays "error", and releasing it keeps the new value', async (t) => {
  const first = client.submit(esm('boom'), ['first run'], { key: 'again' })
  t.regex(((await first.exception()) as Error).message, /first run/)
  const second = client.submit(inc, [9], { key: 'again' })
  t.is(await second.result(), 10)
  t.is(first.status, 'error')
  t.regex(((await first.exception()) as Error).message, /first run/)
  first.release()
  t.is(second.status, 'finished')
  t.is(await second.result(), 10)
  t.deepEqual(await client.whoHas(), { again: (await client.whoHas(second)).again })
  t.is((await client.whoHas(second)).again.length, 1)

  // retry() keeps a generation's Futures on the run it starts (Dask's retry is the same Future); an older generation's Future cannot retry the key.
  const dir = mkdtempSync(join(tmpdir(), 'spillway-generations-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const older = client.submit(esm('boom'), ['older'], { key: 'retried' })
  await older.settled()
  const newer = client.submit(esm('flaky'), [join(dir, 'marker')], { key: 'retried' })
  await newer.settled()
  t.is(newer.status, 'error')
  t.throws(() => older.retry(), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /made before the key was submitted again/ })
  newer.retry()
  t.is(await newer.result(), 'second try works')
  t.is(older.status, 'error')
})

test.serial("a task's own client keeps generations apart: its failed sub-task key submitted again, the old Future released, the new value stays", async (t) => {
  const f = client.submit({ module: join(FIX, 'generations.mjs'), name: 'resubmit' }, [], { pure: false })
  t.deepEqual(await f.result(), { firstStatus: 'error', value: 2, secondStatus: 'finished', again: 2 })
  await until(() => !client.scheduler.tasks.has('sub-again'), 10_000, "the task's holds to be let go of")
})

test.serial('an array or bag persisted before restart and released after leaves the same keys persisted again alone', async (t) => {
  // Its own cluster: it restarts the cluster.
  const { client } = await cluster(t)
  const arr = random.random([40_000], { chunks: 10_000, seed: 3 })
  const items = bag.fromSequence([1, 2, 3, 4, 5, 6], { npartitions: 3 })
  const oldArr = await client.persist(arr)
  const oldBag = await client.persist(items)
  const expected = await client.compute(oldArr.sum())
  await client.restart()
  const newArr = await client.persist(arr)
  const newBag = await client.persist(items)
  oldArr.release()
  oldBag.release()
  for (const k of [...arr.keys(), ...items.keys()]) t.is(client.scheduler.tasks.get(k)?.refs, 1, k)
  t.is(await client.compute(newArr.sum()), expected)
  t.deepEqual(await client.compute(newBag), [1, 2, 3, 4, 5, 6])
  newArr.release()
  newBag.release()
  t.deepEqual(await client.whoHas(), {})
})

test.serial('100 concurrent restarts share one: no MaxListenersExceededWarning, each worker restarted once, not counted as lost', async (t) => {
  // Its own cluster: it restarts the workers and counts lostWorkers from zero.
  const { client } = await cluster(t)
  const warnings: string[] = []
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`)
  process.on('warning', onWarning)
  t.teardown(() => void process.off('warning', onWarning))
  const before = Object.values(await client.run(() => process.pid))
  const f = client.submit(inc, [1])
  await f.result()
  await Promise.all(Array.from({ length: 100 }, () => client.restart()))
  // Warnings are emitted on a later tick.
  await new Promise((r) => setTimeout(r, 100))
  t.deepEqual(warnings.filter((w) => /MaxListeners/.test(w)), [])
  const after = Object.values(await client.run(() => process.pid))
  t.is(after.length, 2)
  for (const p of after) t.false(before.includes(p))
  for (const p of before) t.false(alive(p))
  t.is(f.status, 'cancelled')
  t.is((await clusterReport(client)).lostWorkers, 0, 'a restart asked for is not a loss')
  t.is(await client.submit(inc, [2]).result(), 3)
})

test.serial('taskContext().worker is the address nthreads, whoHas, run and workers= take', async (t) => {
  const addresses = Object.keys(client.nthreads())
  for (const a of addresses) {
    const f = client.submit(esm('context'), [], { workers: [a], pure: false })
    const ctx = (await f.result()) as { worker: string }
    t.is(ctx.worker, a)
    t.deepEqual((await client.whoHas(f))[f.key], [a])
    const pinned = client.submit(esm('context'), [], { workers: [ctx.worker], pure: false })
    t.is(((await pinned.result()) as { worker: string }).worker, a)
    t.true(a in (await client.run(() => 1, [], { workers: [ctx.worker] })))
  }
})

test.serial('rebalance(futures) waits for unfinished Futures before it moves anything (Dask test_rebalance_unprepared)', async (t) => {
  const [a] = Object.keys(client.nthreads())
  const futures = client.map(esm('sleep'), Array.from({ length: 6 }, () => 150), Array.from({ length: 6 }, (_, i) => i), { workers: [a], pure: false })
  t.true(futures.some((f) => f.status === 'pending'))
  await client.rebalance(futures)
  t.deepEqual(futures.map((f) => f.status), futures.map(() => 'finished'))
  // One that fails is waited for too, and left out.
  const failing = client.submit(esm('boom'), ['no value'])
  const slow = client.submit(esm('sleep'), [150, 'late'], { pure: false })
  await client.rebalance([failing, slow])
  t.is(slow.status, 'finished')
  t.is(failing.status, 'error')
  t.deepEqual(await client.gather(futures), [0, 1, 2, 3, 4, 5])
})

test.serial('scatter places values on the workers in turn: 100 over 2 workers are 50 each, single scatters alternate', async (t) => {
  const futures = (await client.scatter(Array.from({ length: 100 }, (_, i) => i))) as { key: string }[]
  t.deepEqual(await spread(client, futures), [50, 50])
  const singles = []
  for (let i = 0; i < 10; i++) singles.push(await client.scatter(`single ${i}`))
  t.deepEqual(await spread(client, singles), [5, 5])
  // Restricted to one worker: all there, and the turn goes on among the allowed.
  const [a] = Object.keys(client.nthreads())
  const pinned = (await client.scatter(['p0', 'p1', 'p2'], { workers: [a] })) as { key: string }[]
  t.deepEqual(Object.values(await client.whoHas(pinned)), [[a], [a], [a]])
})

test.serial('scatter of 99 values of any size over 3 workers puts 33 on each', async (t) => {
  // Its own cluster: three workers.
  const setup = await setupClient({ workloadType: 'cpu', localWorkers: 3, maxMemGb: 3.5, reserveMemGb: 0.5, dashboard: false, silenceLogs: true } as any)
  t.teardown(async () => {
    await setup.client.close()
    await setup.cluster.close()
  })
  const { client } = setup
  t.is(Object.keys(client.nthreads()).length, 3)
  // Values of every size: the turn counts values, not bytes.
  const values = Array.from({ length: 99 }, (_, i) => `v${i}:${'x'.repeat((i * 7919) % 5000)}`)
  const futures = (await client.scatter(values)) as { key: string }[]
  t.deepEqual(await spread(client, futures), [33, 33, 33])
  t.deepEqual(await client.gather(futures), values)
})

test.serial('clusterReport().lostWorkers counts a worker that died, not one retired gracefully', async (t) => {
  // Its own cluster: it retires one worker and SIGKILLs the other, counting lostWorkers from zero.
  const { client } = await cluster(t)
  const [a, b] = Object.keys(client.nthreads())
  const retiredPid = client.scheduler.workers.get(a)!.pid
  await client.retireWorkers([a])
  await until(() => !alive(retiredPid) && !client.scheduler.workers.has(a), 10_000, 'the retired worker to exit')
  t.is((await clusterReport(client)).lostWorkers, 0)
  const pid = client.scheduler.workers.get(b)!.pid
  process.kill(pid, 'SIGKILL')
  await until(() => !client.scheduler.workers.has(b), 10_000, 'the killed worker to be removed')
  t.is((await clusterReport(client)).lostWorkers, 1)
})
