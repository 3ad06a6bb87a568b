import test from 'ava'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { asCompleted, clusterView, Future, schedulerWorkers, taskProgress, wait, withProgress, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks')
const esm = (name: string) => ({ module: join(FIX, 'esm.mjs'), name })

// One cluster for every test (the same workers as cluster()'s): none changes
// its workers; the tests run one at a time.
let client!: Client
sharedCluster(test, (c) => (client = c), { reserveMemGb: 1 })

test.serial('submit, map and gather with module functions (ESM by path and file: URL, CommonJS) and shipped functions', async (t) => {
  const add = client.submit((a: number, b: number) => a + b, [1, 2])
  t.true(add instanceof Future)
  t.false('then' in add, 'a Future is not a thenable')
  t.is(await add.result(), 3)
  t.is(add.status, 'finished')

  const doubled = client.map(esm('double'), [1, 2, 3])
  t.deepEqual(await client.gather(doubled), [2, 4, 6])
  const byUrl = client.submit({ module: pathToFileURL(join(FIX, 'esm.mjs')), name: 'double' }, [21])
  t.is(await byUrl.result(), 42)
  const tripled = client.map({ module: join(FIX, 'cjs.cjs'), name: 'triple' }, [1, 2])
  t.deepEqual(await client.gather(tripled), [3, 6])
  t.is(await client.submit({ module: join(FIX, 'default.cjs') }, [7]).result(), 49)
  // Object-method shorthand and async functions ship as their source.
  const helpers = {
    shout(s: string) {
      return s.toUpperCase()
    },
    async later(x: number) {
      return x + 1
    },
  }
  t.is(await client.submit(helpers.shout, ['hi']).result(), 'HI')
  t.is(await client.submit(helpers.later, [1]).result(), 2)
})

test.serial('Futures nested anywhere in the arguments become their values; gather keeps the shape', async (t) => {
  const [a, b, c] = client.map(esm('double'), [1, 2, 3])
  const total = client.submit(esm('sumAll'), [[a, b, c]])
  const shaped = client.submit(esm('describe'), [{ a, b: [b, { deep: c }] }])
  t.is(await total.result(), 12)
  t.deepEqual(await shaped.result(), { a: 2, c: 4, d: { deep: 6 } })
  t.deepEqual(await client.gather({ x: [a, 'plain', { y: b }], total }), { x: [2, 'plain', { y: 4 }], total: 12 })
})

test.serial('pure calls share a key and run once; key, priority and workers options are honoured', async (t) => {
  const f1 = client.submit(esm('double'), [5])
  const f2 = client.submit(esm('double'), [5])
  t.is(f1.key, f2.key)
  const impure = [client.submit((x: number) => x, [1]), client.submit((x: number) => x, [1])]
  t.not(impure[0].key, impure[1].key, 'shipped functions are not pure unless asked')
  const named = client.submit(esm('double'), [1], { key: 'my-key' })
  t.is(named.key, 'my-key')
  t.is(await named.result(), 2)
  const workers = Object.keys(await schedulerWorkers(client))
  const pinned = client.map(esm('pid'), [1, 2, 3], { workers: [workers[1]] })
  const pids = new Set(await client.gather(pinned))
  t.is(pids.size, 1)
  t.is([...pids][0], (await schedulerWorkers(client))[workers[1]].pid)
})

test.serial('taskContext gives the key, the worker and a signal; wait and asCompleted report every Future', async (t) => {
  const ctx = client.submit(esm('context'), [], { key: 'ctx-task' })
  const v = (await ctx.result()) as any
  t.is(v.key, 'ctx-task')
  // The address client.run, whoHas and `workers` take, not the worker's data socket.
  t.true(Object.keys(client.nthreads()).includes(v.worker), `${v.worker} among the workers`)
  t.false(v.aborted)

  const slow = client.submit(esm('sleep'), [2_000, 'slow'])
  const fast = client.submit(esm('sleep'), [10, 'fast'])
  const first = await wait([slow, fast], { returnWhen: 'FIRST_COMPLETED' })
  t.deepEqual(first.done.map((f) => f.key), [fast.key])
  t.deepEqual(first.notDone.map((f) => f.key), [slow.key])
  await t.throwsAsync(() => wait([slow], { timeout: 10 }), { code: 'ERR_SPILLWAY_TIMEOUT' })
  const failing = client.submit(esm('boom'), ['x'])
  const order: string[] = []
  for await (const f of asCompleted([slow, failing])) order.push(f.status)
  t.deepEqual(order, ['error', 'finished'])
  const all = await wait([slow, fast, failing])
  t.is(all.notDone.length, 0)
})

test.serial('user tasks show in the dashboard view grouped by function name, with each worker’s transfer bytes, and in task progress', async (t) => {
  const [a, b] = Object.keys(await schedulerWorkers(client))
  const cols = [0, 1, 2].map((i) => client.submit(esm('column'), [i, 100_000], { workers: [a] }))
  const sums = client.map(esm('total'), cols, { workers: [b] })
  await client.gather(sums)
  t.deepEqual(taskProgress(client, sums.map((f) => f.key)), { done: 3, total: 3, spilledBytes: 0 })
  let seen = 0
  await withProgress(client, sums, async () => (seen = 1), { enabled: false })
  t.is(seen, 1)
  await schedulerWorkers(client)
  const view = clusterView(client, 'localhost')
  const groups = Object.fromEntries(view.tasks.groups.map((g) => [g.name, g]))
  t.like(groups.column, { total: 3, memory: 3 })
  t.like(groups.total, { total: 3, memory: 3 })
  const rows = Object.fromEntries(view.workers.map((w) => [w.address, w]))
  t.true(rows[a].transfer.outgoingBytes >= 3 * 800_000, `sent ${rows[a].transfer.outgoingBytes}`)
  t.true(rows[b].transfer.incomingBytes >= 3 * 800_000, `received ${rows[b].transfer.incomingBytes}`)
})
