// Tasks that submit tasks (Dask's get_client / secede / rejoin): on one
// worker of one thread, a task that waits on its own sub-tasks gives its
// slot back, so recursion cannot deadlock; what a task holds is let go of
// when it ends or dies.
import test from 'ava'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getClient, rejoin, secede, setupClient, type Client, type LocalCluster } from '../src/index'
import { checkTaskCall } from '../src/wire/validate'
import { WorkerRpc } from '../src/comm/rpc'
import { until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks', 'subtasks.mjs')
const fx = (name: string) => ({ module: FIX, name })

let client: Client
let cluster: LocalCluster

test.before(async () => {
  const r = await setupClient({ workloadType: 'cpu', maxWorkers: 1, threadsPerWorker: 1, maxMemGb: 1.5, reserveMemGb: 0.5, dashboard: false, silenceLogs: true } as any)
  client = r.client
  cluster = r.cluster
})
test.after.always(async () => {
  await client?.close()
  await cluster?.close()
})

const worker = () => [...cluster.scheduler.workers.values()][0]

test.serial('one worker of one thread: recursive getClient fib finishes without deadlock', async (t) => {
  t.deepEqual(Object.values(client.nthreads()), [1])
  const f = client.submit(fx('fib'), [15])
  t.is(await f.result(), 610)
  f.release()
  await until(() => cluster.scheduler.tasks.size === 0, 10_000, 'every key of the recursion released')
  t.is(cluster.taskClients.runsOn(worker()), 0)
  t.is(worker().seceded, 0)
})

test.serial('a task submits a map, waits on it, and gathers it; a sub-task takes the map’s Futures', async (t) => {
  const f = client.submit(fx('squares'), [6])
  t.deepEqual(await f.result(), { values: [0, 1, 4, 9, 16, 25], total: 55, done: 6, seen: 6 })
  f.release()
})

test.serial('a sub-task that throws rejects in its parent with ERR_SPILLWAY_TASK, and the parent’s Future fails with it', async (t) => {
  const f = client.submit(fx('parentOfBoom'), ['deep trouble'])
  const e = await t.throwsAsync(() => f.result(), { code: 'ERR_SPILLWAY_TASK' })
  t.regex(e!.message, /deep trouble/)
  t.is(f.status, 'error')
  f.release()
})

test.serial('explicit secede() lets a sub-task run on the only thread; rejoin() takes it back', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-secede-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // Released before the marker's folder goes: a held result would be made again after the kill below.
  const f = client.submit(fx('explicit'), [join(dir, 'touched')])
  t.is(await f.result(), 'touched')
  f.release()
})

test.serial('getClient(), secede() and rejoin() outside a task throw ERR_SPILLWAY_NO_TASK', async (t) => {
  t.throws(() => getClient(), { code: 'ERR_SPILLWAY_NO_TASK' })
  t.throws(() => secede(), { code: 'ERR_SPILLWAY_NO_TASK' })
  t.throws(() => rejoin(), { code: 'ERR_SPILLWAY_NO_TASK' })
})

test.serial('a worker killed while its task waits on sub-tasks: the task runs again and finishes; the dead run’s keys are released', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-subtask-kill-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const marker = join(dir, 'waiting')
  const first = worker()
  // Earlier tests' Futures may not be collected yet: only what this one adds must go.
  const before = new Set(cluster.scheduler.tasks.keys())
  // With its only worker dead, nothing else keeps this process's event loop
  // alive until the nanny's (unref'd) restart timer fires.
  const keepAlive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(keepAlive))
  const f = client.submit(fx('waitsOnSleeper'), [marker, 1500])
  await until(() => existsSync(marker), 20_000, 'the task to wait on its sub-task')
  t.is(Number(readFileSync(marker, 'utf8')), first.pid)
  process.kill(first.pid, 'SIGKILL')
  t.is(await f.result(), 1501)
  t.not(worker(), first, 'a new incarnation ran it again')
  f.release()
  await until(() => [...cluster.scheduler.tasks.keys()].every((k) => before.has(k)), 10_000, 'the dead run’s sub-task and the rerun’s released').catch((e) => {
    throw new Error(`${e.message}: ${JSON.stringify([...cluster.scheduler.tasks.values()].filter((x) => !before.has(x.key)).map((x) => [x.key, x.state, x.refs, x.dependents.size]))}`)
  })
  t.is(cluster.taskClients.runsOn(first), 0)
  t.is(cluster.taskClients.runsOn(worker()), 0)
})

test('a malformed worker→scheduler call is refused with ERR_SPILLWAY_PROTOCOL naming the field', (t) => {
  const ok = { op: 'submit', run: '1', tasks: [{ key: 'k', task: { fn: 'call', func: { kind: 'source', id: 's:1', source: '(x) => x', label: 'f' }, args: [1], deps: [] }, deps: [], group: 'f' }] }
  t.is(checkTaskCall(ok), ok as never)
  const bad = (c: unknown, field: RegExp) => {
    const e = t.throws(() => checkTaskCall(c), { code: 'ERR_SPILLWAY_PROTOCOL' })
    t.regex(String(e!.details.field), field)
  }
  bad(null, /^call$/)
  bad({ op: 'rm -rf', run: '1' }, /call\.op/)
  bad({ op: 'wait', run: 1, keys: [] }, /run/)
  bad({ op: 'wait', run: '1', keys: [3] }, /keys\[0\]/)
  bad({ op: 'release', run: '1', keys: ['k-\ud800'] }, /keys\[0\]/)
  bad({ ...ok, tasks: [{ ...ok.tasks[0], task: { ...ok.tasks[0].task, fn: 'chunk' } }] }, /tasks\[0\]\.task\.fn/)
  bad({ ...ok, tasks: [{ ...ok.tasks[0], task: { ...ok.tasks[0].task, func: { kind: 'native', id: 'n:shuffle.split', op: 'shuffle.split', label: 'x' } } }] }, /func\.op/)
  bad({ ...ok, tasks: [{ ...ok.tasks[0], priority: Infinity }] }, /priority/)
  bad({ ...ok, tasks: [{ ...ok.tasks[0], task: { ...ok.tasks[0].task, deps: [{ key: 'a', path: [{}] }] } }] }, /path\[0\]/)
})

test('a malformed call is answered with the coded error and the link is kept; a good one reaches the handler', async (t) => {
  let deliver: (m: unknown) => void = () => {}
  const sent: any[] = []
  let dropped = false
  const transport = { send: (m: unknown) => (sent.push(m), true), onMessage: (fn: (m: unknown) => void) => (deliver = fn), onClose() {}, close() {}, destroy: () => (dropped = true) }
  const rpc = new WorkerRpc('test-worker', transport as any, { heartbeat() {}, log() {}, closed() {} })
  deliver({ kind: 'call', id: 1, call: { op: 'wait', run: '1', keys: ['k'] } })
  rpc.answerCalls(async (c) => `handled ${c.op}`)
  deliver({ kind: 'call', id: 2, call: { op: 'secede', run: 7 } })
  deliver({ kind: 'call', id: 3, call: { op: 'done', run: '7' } })
  await new Promise((r) => setImmediate(r))
  t.like(sent.find((m) => m.id === 1), { kind: 'answer', ok: false, error: { code: 'ERR_SPILLWAY_PROTOCOL' } })
  t.like(sent.find((m) => m.id === 2), { kind: 'answer', ok: false, error: { code: 'ERR_SPILLWAY_PROTOCOL' } })
  t.like(sent.find((m) => m.id === 3), { kind: 'answer', ok: true, result: 'handled done' })
  t.false(dropped)
  t.false(rpc.closed)
})

test.serial('over TCP: a worker that joined from elsewhere (spillway worker) runs the recursive fib on its one thread', async (t) => {
  t.timeout(2 * 60_000)
  const dir = mkdtempSync(join(tmpdir(), 'spillway-subtask-tcp-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'scheduler.json')
  const r = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 1.5, reserveMemGb: 0.5, dashboard: false, silenceLogs: true, schedulerFile: file, localWorkers: 0 } as any)
  t.teardown(async () => {
    await r.client.close()
    await r.cluster.close()
  })
  const args = ['worker', '--scheduler-file', file, '--nworkers', '1', '--threads-per-worker', '1', '--max-mem-gb', '1.5', '--reserve-mem-gb', '0.5', '--temp-base-dir', dir]
  const child = spawn(process.execPath, [join(__dirname, '..', 'bin', 'spillway.js'), ...args], { stdio: 'ignore' })
  t.teardown(() => void child.kill('SIGKILL'))
  await r.client.waitForWorkers(1, { timeout: 60_000 })
  t.deepEqual(Object.values(r.client.nthreads()), [1])
  t.regex(Object.keys(r.client.nthreads())[0], /^tcp:/)
  t.is(await r.client.submit(fx('fib'), [12]).result(), 144)
})
