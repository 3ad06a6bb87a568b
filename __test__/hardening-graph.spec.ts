// A graph past maxGraphTasks is refused before a task of it is made (issue
// 32, item 10: rechunk to one-element chunks ran the client out of heap),
// and a client that dies anyway leaves no spill directory behind.
import test from 'ava'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, generateChunkSync, random, setupClient, type Client } from 'spillway'
import { alive, cluster, sharedCluster, until } from './cluster-helpers'

let client!: Client
sharedCluster(test, (c) => (client = c))

const FIXTURE = join(__dirname, 'fixtures', 'client-dies.cjs')

/** Runs `make` and checks it is refused as a graph of `tasks` tasks against `limit`, with no task reaching the scheduler. */
async function refused(t: { throwsAsync: any; is: any; regex: any }, c: Client, make: () => Promise<unknown>, tasks: number, limit: number, what: RegExp) {
  const before = c.scheduler.tasks.size
  const e = await t.throwsAsync(make, { code: 'ERR_SPILLWAY_GRAPH_TOO_LARGE' })
  const fmt = (n: number) => n.toLocaleString('en-US')
  t.regex(e.message, new RegExp(`needs ${fmt(tasks)} tasks, past this client's limit of ${fmt(limit)} \\(maxGraphTasks\\)`))
  t.regex(e.message, /raise maxGraphTasks in setupClient/)
  t.regex(e.message, what)
  t.is(e.details.tasks, tasks)
  t.is(e.details.maxGraphTasks, limit)
  t.is(c.scheduler.tasks.size, before, 'no task of it reached the scheduler')
}

test.serial('rechunk of a 3000² array to one-element chunks is refused up front, naming the count and the limit', async (t) => {
  const x = random.random([3000, 3000], { chunks: [300, 3000], seed: 1 })
  const y = x.rechunk(1)
  // 10 old chunks, 10 splits, 9 000 000 new chunks.
  t.is(y.taskCount(), 9_000_020)
  const what = /array rechunk-[0-9a-f]{16} of shape \[3000, 3000\] in chunks \[1, 1\].*use larger chunks/
  await refused(t, client, () => client.persist(y), 9_000_020, 100_000, what)
  await refused(t, client, () => client.compute(y.sum()), 9_000_020, 100_000, what)
  // Chunks past the limit on any grid, and through a map.
  const small = random.random([3000, 3000], { chunks: 1 })
  await refused(t, client, () => client.persist(small), 9_000_000, 100_000, /array random-[0-9a-f]{16} of shape \[3000, 3000\] in chunks \[1, 1\]/)
  await refused(t, client, () => client.compute(small.mapBlocks((c: Float64Array) => c).mean()), 18_000_000, 100_000, /in chunks \[1, 1\]/)
})

test.serial('bags past the limit are refused alike: partitions, a shuffle into many outputs, a reduction, take', async (t) => {
  const many = bag.fromSequence(Array.from({ length: 100_001 }, (_, i) => i), { npartitions: 100_001 })
  const advice = /of 100001 partitions.*use fewer, larger partitions/
  await refused(t, client, () => client.compute(many), 100_001, 100_000, advice)
  await refused(t, client, () => client.persist(many), 100_001, 100_000, advice)
  await refused(t, client, () => client.compute(many.take(3)), 100_001, 100_000, advice)
  // A count per partition, then a tree of 8 a task: 12 501 + 1 563 + 196 + 25 + 4 + 1.
  await refused(t, client, () => client.compute(many.count()), 114_291, 100_000, /reduction count-[0-9a-f]{16}/)
  const few = bag.fromSequence([1, 2, 3, 4], { npartitions: 2 })
  // 2 splits and 200 000 outputs (fromSequence's partitions are no tasks of their own once fused into the splits).
  await refused(t, client, () => client.compute(few.groupBy((x: number) => x % 2, { npartitions: 200_000 })), 200_002, 100_000, /of 200000 partitions/)
  // Under the limit the same bag computes.
  t.deepEqual((await client.compute(few.groupBy((x: number) => x % 2, { npartitions: 3 }))).map(([k, v]) => [k, [...v].sort()]).sort(), [
    [0, [2, 4]],
    [1, [1, 3]],
  ])
})

test.serial('the counts are those of the tasks made, for arrays and bags of random shapes (seeded)', (t) => {
  let seed = 32
  const rand = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return 1 + (seed % n)
  }
  for (let i = 0; i < 30; i++) {
    const dims = rand(3)
    const shape = Array.from({ length: dims }, () => rand(40))
    const x = random.random(shape, { chunks: shape.map((n) => rand(n)), seed: i })
    const y = x.mapBlocks((c: Float64Array) => c).rechunk(shape.map((n) => rand(n)))
    for (const a of [x, y]) t.is(a.taskCount(), a.tasks().length, `shape ${shape}`)
    const b = bag.fromSequence(Array.from({ length: rand(60) }, (_, k) => k), { npartitions: rand(20) })
    const g = b.groupBy((v: number) => v % 3, { npartitions: rand(7) })
    const bags = [b, g, g.map((p: unknown) => p).repartition(rand(4)), b.concat(g as never), b.join(b, (v: number) => v, (v: number) => v), b.sortBy((v: number) => -v), b.frequencies({ splitOut: rand(3) })]
    for (const c of bags) t.is(c.taskCount(), c.tasks().length)
    for (const r of [b.count({ splitEvery: rand(9) }), g.sum(), b.std()]) t.is(r.tasks.count, r.tasks().length)
  }
})

test.serial('maxGraphTasks raises or lowers the limit; a graph at the limit computes the right value', async (t) => {
  // Its own cluster: another maxGraphTasks.
  const { client: c } = await cluster(t, { maxGraphTasks: 25 })
  t.is(c.maxGraphTasks, 25)
  const x = random.random([25], { chunks: 1, seed: 7 })
  let expected = 0
  for (let id = 0; id < 25; id++) {
    const buf = generateChunkSync({ kind: 'random', seed: 7, chunkId: id, len: 1 })
    expected += new Float64Array(buf.buffer, buf.byteOffset, 1)[0]
  }
  t.true(Math.abs((await c.compute(x.sum())) - expected) < 1e-9)
  // 25 + 25 splits + 13 new chunks.
  await refused(t, c, () => c.compute(x.rechunk(2).sum()), 63, 25, /in chunks \[2\]/)
  t.deepEqual(await c.compute(bag.fromSequence([1, 2, 3], { npartitions: 3 }).map((v: number) => v * 2)), [2, 4, 6])
  await refused(t, c, () => c.compute(bag.fromSequence(Array.from({ length: 26 }, (_, i) => i), { npartitions: 26 })), 26, 25, /of 26 partitions/)
})

test.serial('maxGraphTasks must be a positive integer', async (t) => {
  const e = await t.throwsAsync(setupClient({ maxGraphTasks: 0, dashboard: false, silenceLogs: true }), { code: 'ERR_SPILLWAY_INVALID_CONFIG' })
  t.regex(e.message, /maxGraphTasks/)
  t.regex(e.message, /positive integer/)
})

const HOW = { oom: 'out of heap', kill: 'of SIGKILL', busy: 'of SIGKILL while both workers are in a 2-minute synchronous task' }
for (const mode of ['oom', 'kill', 'busy'] as const) {
  test.serial(`a client that dies ${HOW[mode]} leaves no spill directory, spill file or worker behind`, async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'spillway-dies-'))
    t.teardown(() => rmSync(base, { recursive: true, force: true }))
    const child = spawn(process.execPath, ['--max-old-space-size=200', FIXTURE, base, mode], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
    const first = JSON.parse(out.trim().split('\n')[0]) as { tempDir: string; pids: number[] }
    t.is(first.pids.length, 2)
    t.true(first.tempDir.startsWith(base))
    if (mode === 'oom') t.regex(err, /heap out of memory/, `exit ${JSON.stringify(exit)}`)
    else t.is(exit.signal, 'SIGKILL')
    // A busy worker's JavaScript thread cannot notice; the core's watch of its parent does, in well under its task's two minutes.
    await until(() => first.pids.every((p) => !alive(p)), mode === 'busy' ? 10_000 : 30_000, 'the workers to exit')
    await until(() => readdirSync(base).length === 0, 30_000, `${base} to be empty (left: ${readdirSync(base)})`)
    t.deepEqual(readdirSync(base), [])
  })
}
