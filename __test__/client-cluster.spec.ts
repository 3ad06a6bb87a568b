import test from 'ava'
import { schedulerWorkers, SpillwayError, type Client } from 'spillway'
import { planRebalance } from '../src/scheduler/rebalance-rule'
import { alive, cluster, sharedCluster, until } from './cluster-helpers'

// One cluster for the tests that leave its workers as they found them (the
// same workers as cluster()'s); the tests run one at a time.
let client!: Client
sharedCluster(test, (c) => (client = c), { reserveMemGb: 1 })

async function addresses(client: Client): Promise<[string, string]> {
  const ws = Object.keys(await schedulerWorkers(client)).sort()
  return [ws[0], ws[1]]
}

test.serial('client.run calls a function on every worker and returns { address: result }; a throw names the worker', async (t) => {
  const [a, b] = await addresses(client)
  const pids = await client.run(() => process.pid)
  t.deepEqual(Object.keys(pids).sort(), [a, b])
  t.deepEqual(pids[a], client.scheduler.workers.get(a)!.pid)
  t.deepEqual(await client.run((x: number, y: number) => x * y, [6, 7], { workers: [b] }), { [b]: 42 })
  const err = await t.throwsAsync(client.run(() => {
    throw new Error('boom')
  }, [], { workers: [a] }))
  t.is((err as SpillwayError).code, 'ERR_SPILLWAY_TASK')
  t.regex(err!.message, new RegExp(`on worker ${a.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*boom`))
  const bad = await t.throwsAsync(client.run(() => 1, [], { workers: ['no-such-worker'] }))
  t.is((bad as SpillwayError).code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
})

test.serial('whoHas and hasWhat say where values live; replicate keeps copies, so a lost holder costs no recompute', async (t) => {
  // Its own cluster: it SIGKILLs a worker.
  const { client } = await cluster(t)
  const [a, b] = await addresses(client)
  const f = client.submit((n: number) => Buffer.alloc(n, 7), [3 << 20], { workers: [a], pure: false })
  await f.result()
  t.deepEqual(await client.whoHas([f]), { [f.key]: [a] })
  t.true((await client.hasWhat())[a].includes(f.key))
  t.false((await client.hasWhat())[b].includes(f.key))

  await client.replicate([f])
  t.deepEqual((await client.whoHas(f))[f.key].sort(), [a, b])
  t.true((await client.hasWhat())[b].includes(f.key))

  const pid = client.scheduler.workers.get(a)!.pid
  process.kill(pid, 'SIGKILL')
  await until(() => !alive(pid) && !client.scheduler.workers.has(a), 10_000, 'the holder to be removed')
  t.deepEqual((await client.whoHas(f))[f.key], [b], 'the copy took over')
  t.is(client.scheduler.tasks.get(f.key)!.runs, 1, 'not made again')
  t.deepEqual(await f.result(), Buffer.alloc(3 << 20, 7))

  // Back to one copy: replicate(f, 1) drops the extra ones.
  await until(() => client.scheduler.workers.size === 2, 20_000, 'the nanny to start a new worker')
  await client.replicate(f, 2)
  t.is((await client.whoHas(f))[f.key].length, 2)
  await client.replicate(f, 1)
  t.is((await client.whoHas(f))[f.key].length, 1)
  const zero = await t.throwsAsync(client.replicate(f, 0))
  t.is((zero as SpillwayError).code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
})

test.serial('rebalance moves values from the worker holding most to the one holding least', async (t) => {
  const [a, b] = await addresses(client)
  // 40% of A's limit on A (above Dask's sender-min of 30%), nothing on B.
  const limit = client.scheduler.workers.get(a)!.memoryLimit
  const n = Math.ceil((0.4 * limit) / (32 << 20))
  const fs = Array.from({ length: n }, (_, i) => client.submit((n: number, s: number) => Buffer.alloc(n, s), [32 << 20, i], { workers: [a], pure: false }))
  await Promise.all(fs.map((f) => f.result().then(() => {})))
  const result = await client.rebalance()
  const [wa, wb] = [client.scheduler.workers.get(a)!, client.scheduler.workers.get(b)!]
  t.true(result.moved > 0)
  t.true(Math.abs(wa.heldBytes - wb.heldBytes) <= 0.1 * limit + (32 << 20), `${wa.heldBytes} and ${wb.heldBytes} bytes after`)
  const where = await client.whoHas(fs)
  const onB = fs.filter((f) => where[f.key][0] === b).length
  t.is(onB, result.moved)
  t.deepEqual(fs.map((f) => client.scheduler.tasks.get(f.key)!.runs), fs.map(() => 1))
  const values = (await client.gather(fs)) as Buffer[]
  t.deepEqual(values.map((v) => v[100]), fs.map((_, i) => i))
  // Balanced now: nothing more to move.
  t.is((await client.rebalance()).moved, 0)
})

test.serial('client.restart kills and restarts every worker; Futures are cancelled and the cluster works after', async (t) => {
  // Its own cluster: it restarts the cluster.
  const { client } = await cluster(t)
  const before = Object.values(await client.run(() => process.pid))
  const f = client.submit((x: number) => x * 2, [21], { pure: false })
  t.is(await f.result(), 42)
  await client.restart()
  const after = Object.values(await client.run(() => process.pid))
  t.is(after.length, 2)
  for (const p of after) t.false(before.includes(p))
  t.is(f.status, 'cancelled')
  const err = await t.throwsAsync(f.result())
  t.is((err as SpillwayError).code, 'ERR_SPILLWAY_CANCELLED')
  t.is(await client.submit((x: number) => x + 1, [1]).result(), 2)
})

// Dask's rule (distributed/scheduler.py _rebalance_find_msgs): senders above mean + half gap and sender-min;
// recipients below mean - half gap and recipient-max; no sender below the mean, no recipient above it.
test.serial('planRebalance follows Dask rebalance rule', (t) => {
  const GB = 2 ** 30
  const vals = (n: number, size: number) => Array.from({ length: n }, (_, i) => ({ key: `k${size}-${i}`, nbytes: size }))
  // Mean 0.3 GB: A at 0.6 sends, B and C at 0.15 receive.
  const w = (worker: string, values: Array<{ key: string; nbytes: number }>) => ({ worker, memory: values.reduce((n, v) => n + v.nbytes, 0), memoryLimit: GB, values })
  const MB = 2 ** 20
  const moves = planRebalance([w('A', vals(12, 51.2 * MB)), w('B', vals(3, 51.2 * MB).map((v) => ({ ...v, key: 'b' + v.key }))), w('C', vals(3, 51.2 * MB).map((v) => ({ ...v, key: 'c' + v.key })))])
  // Each recipient takes values until within half a gap (0.05 GB) of the mean: two each.
  t.true(moves.every((m) => m.from === 'A'))
  t.is(moves.filter((m) => m.to === 'B').length, 2)
  t.is(moves.filter((m) => m.to === 'C').length, 2)
  // All under sender-min (0.30 of the limit): nothing moves, however uneven.
  t.deepEqual(planRebalance([w('A', vals(5, 50 * MB)), w('B', [])]), [])
  // Within the gap of the mean: nothing moves.
  t.deepEqual(planRebalance([w('A', vals(7, 50 * MB)), w('B', vals(6, 50 * MB))]), [])
  // A value larger than the sender's excess stays (never below the mean).
  t.deepEqual(planRebalance([w('A', vals(1, 0.8 * GB)), w('B', [])]), [])
  // A recipient that has a copy is not sent one.
  const one = { key: 'x', nbytes: 0.4 * GB, on: new Set(['B']) }
  t.deepEqual(planRebalance([{ worker: 'A', memory: 0.9 * GB, memoryLimit: GB, values: [one] }, w('B', [])]), [])
})
