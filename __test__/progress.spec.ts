import test from 'ava'
import { Client, monitor, ProgressBar, progressEnabled, random, setupClient, taskProgress, withProgress } from 'spillway'
import { fakeTty } from './tty-helpers'

/** Just what withProgress reads from a client: the scheduler's task records and worker metrics. */
function fakeClient(keys: string[]) {
  const tasks = new Map(keys.map((k) => [k, { state: 'queued' as string }]))
  const workers = new Map([['w0', { metrics: { managedBytes: 0, spilledBytes: { memory: 0, disk: 0 } } }]])
  return { client: { scheduler: { tasks, workers } } as any, tasks, workers }
}

test('a bar is drawn only on a terminal, and never when disabled', (t) => {
  t.false(progressEnabled({ stream: fakeTty(false) }))
  t.true(progressEnabled({ stream: fakeTty(true) }))
  t.false(progressEnabled({ stream: fakeTty(true), enabled: false }))
  const quiet = fakeTty(false)
  const bar = new ProgressBar(10, { stream: quiet })
  bar.update(5, 2 ** 30)
  bar.stop()
  t.false(bar.active)
  t.is(quiet.text(), '')
})

test('the bar shows tasks done / total and GiB spilled', (t) => {
  const tty = fakeTty()
  const bar = new ProgressBar(10, { stream: tty, label: 'persist', clear: false })
  t.true(bar.active)
  bar.update(3, 1.5 * 2 ** 30)
  bar.stop()
  t.regex(tty.text(), /persist \[.*\] 3\/10 tasks \| spilled 1\.50 GiB/)
})

test('taskProgress counts chunks in memory, and released ones once seen', (t) => {
  const keys = ['a', 'b', 'c', 'd']
  const { client, tasks, workers } = fakeClient(keys)
  const seen = new Set<string>()
  t.like(taskProgress(client, keys, seen), { done: 0, total: 4, spilledBytes: 0 })
  tasks.get('a')!.state = 'memory'
  tasks.get('b')!.state = 'processing'
  tasks.delete('c') // reduced and released
  workers.get('w0')!.metrics.spilledBytes.disk = 123
  t.like(taskProgress(client, keys, seen), { done: 2, total: 4, spilledBytes: 123 })
  t.like(taskProgress(client, ['never-submitted'], seen), { done: 0, total: 1 })
})

test('withProgress passes the result and errors of the work through, and draws as tasks finish', async (t) => {
  const keys = ['a', 'b']
  const { client, tasks } = fakeClient(keys)
  const tty = fakeTty()
  const value = await withProgress(
    client,
    keys,
    async () => {
      tasks.get('a')!.state = 'memory'
      await new Promise((r) => setTimeout(r, 120))
      tasks.get('b')!.state = 'memory'
      return 42
    },
    { stream: tty, intervalMs: 20, clear: false, label: 'persist' },
  )
  t.is(value, 42)
  t.regex(tty.text(), /2\/2 tasks/)
  await t.throwsAsync(withProgress(client, keys, Promise.reject(new Error('boom')), { stream: fakeTty() }), { message: 'boom' })
  t.is(await withProgress(client, keys, () => 7, { stream: fakeTty(false) }), 7)
})

test('a client made with silenceLogs never draws, even on a terminal', async (t) => {
  const { client, tasks } = fakeClient(['a'])
  client.silenceLogs = true
  const tty = fakeTty()
  tasks.get('a')!.state = 'memory'
  t.is(await withProgress(client, ['a'], async () => 1, { stream: tty }), 1)
  t.is(tty.text(), '')
})

test('on a real cluster: the bar follows persist to every chunk held, and persist / compute take { progress }', async (t) => {
  const setup = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false, silenceLogs: true })
  t.teardown(() => setup[Symbol.asyncDispose]())
  const client = new Client(setup.cluster) // not silenced; output is not a TTY under ava, so nothing is drawn
  const x = await client.persist(random.random([4_000, 4_000], { chunks: [1_000, 1_000], seed: 5 }), { progress: true })
  const tty = fakeTty()
  await withProgress(client, x, () => x.wait(), { stream: tty, clear: false, intervalMs: 20 })
  t.regex(tty.text(), /16\/16 tasks \| spilled 0\.00 GiB/)
  const mean = await client.compute(x.mean(), { progress: true })
  t.true(Math.abs(mean - 0.5) < 0.01)
  const transient = await client.compute(random.randint(0, 10, [2_000, 2_000], { chunks: 500, seed: 6 }).sum(), { progress: true })
  t.true(Math.abs(transient / 4e6 - 4.5) < 0.05)
})

test('a polling interval below 1 ms is rejected by name before anything runs, in monitor and withProgress', async (t) => {
  let ran = false
  const work = async () => {
    ran = true
    return 1
  }
  for (const intervalMs of [0, -5, Number.NaN, '100' as any]) {
    const a = await t.throwsAsync(() => monitor({} as Client, work, { intervalMs }), { code: 'ERR_SPILLWAY_INVALID_CONFIG' })
    t.regex(a!.message, /intervalMs/)
    const b = await t.throwsAsync(() => withProgress({} as Client, [], work, { intervalMs }), { code: 'ERR_SPILLWAY_INVALID_CONFIG' })
    t.regex(b!.message, /intervalMs/)
  }
  t.false(ran)
})
