// A task that submits a million sub-tasks (issue 32, item 9): bounded by
// what one task may hold at once, with a coded error, before its worker's
// memory goes; work submitted in batches and let go of is not bounded.
import test from 'ava'
import { join } from 'node:path'
import { schedulerWorkers, setupClient, type Client, type LocalCluster } from 'spillway'
import { until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks', 'subtasks.mjs')
const fx = (name: string) => ({ module: FIX, name })

let client: Client
let cluster: LocalCluster
test.before(async () => {
  const r = await setupClient({ workloadType: 'cpu', maxWorkers: 1, threadsPerWorker: 1, maxMemGb: 1.5, reserveMemGb: 0.5, dashboard: false, silenceLogs: true })
  client = r.client
  cluster = r.cluster
})
test.after.always(async () => {
  await client?.close()
  await cluster?.close()
})

interface Flood {
  submitted: number
  tail: number[]
  code: string
  message: string
  details: { held: number; more: number; maxHeldSubtasks: number }
  rss: number
}

test.serial('a map of a million sub-tasks inside a task is refused before any is made, naming the count and the bound', async (t) => {
  const f = client.submit(fx('flood'), [1_000_000, 'map'])
  const got = (await f.result()) as Flood
  f.release()
  t.is(got.submitted, 0)
  t.is(got.code, 'ERR_SPILLWAY_GRAPH_TOO_LARGE')
  t.regex(got.message, /^this task holds 0 sub-tasks and would submit 1,000,000 more, past the 50,000 one task may hold at once: submit in batches/)
  t.deepEqual(got.details, { held: 0, more: 1_000_000, maxHeldSubtasks: 50_000 })
  await until(() => cluster.scheduler.tasks.size === 0, 30_000, 'nothing held')
})

test.serial('a million sub-tasks submitted one by one: the 50 001st throws, the 50 000 sent run, the worker lives and nothing is held after', async (t) => {
  const [before] = Object.values(await schedulerWorkers(client))
  const f = client.submit(fx('flood'), [1_000_000, 'submit'])
  const got = (await f.result()) as Flood
  f.release()
  t.is(got.submitted, 50_000)
  t.deepEqual(got.tail, [49_997, 49_998, 49_999].map((i) => i * i))
  t.is(got.code, 'ERR_SPILLWAY_GRAPH_TOO_LARGE')
  t.regex(got.message, /^this task holds 50,000 sub-tasks and would submit 1 more, past the 50,000 one task may hold at once/)
  // Well under the worker's 1 GiB limit, and the same worker process.
  t.true(got.rss < before.memoryLimit * 0.6, `rss ${got.rss}`)
  const [after] = Object.values(await schedulerWorkers(client))
  t.is(after.pid, before.pid)
  t.is(cluster.scheduler.lostWorkers, 0)
  await until(() => cluster.scheduler.tasks.size === 0, 60_000, 'every sub-task let go of')
})

test.serial('sub-tasks in batches that are let go of pass the bound in total: the exact sum', async (t) => {
  const f = client.submit(fx('batched'), [60_000, 20_000])
  let want = 0
  for (let i = 0; i < 60_000; i++) want += i * i
  t.is(await f.result(), want)
  f.release()
  await until(() => cluster.scheduler.tasks.size === 0, 60_000, 'every sub-task let go of')
})
