// The shuffle under the memory limit and through failures, on real workers.
import test from 'ava'
import { spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, ftruncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, schedulerWorkers } from 'spillway'
import { hashKey } from '../src/wire/bag'
import { cluster, GIB, until } from './cluster-helpers'

test('a shuffle of 3 times the workers memory finishes exact, every worker under its limit, none lost', async (t) => {
  const { client, cluster: c } = await cluster(t, { maxMemGb: 2, reserveMemGb: 0 })
  const workers = Object.values(await schedulerWorkers(client))
  const limit = workers.reduce((a, w) => a + w.memoryLimit, 0)
  const parts = 48
  const perItem = 64 * 1024
  const perPart = Math.ceil((3 * limit) / parts / perItem)
  // Binary payloads: the shuffle's bytes are the data's, not a serialiser's.
  const items = bag
    .fromSequence(Array.from({ length: parts }, (_, i) => i), { npartitions: parts })
    .flatMap((i: number, n: number, size: number) => Array.from({ length: n }, (_, j) => ({ k: (i * 7919 + j) % 97, p: Buffer.alloc(size, (i + j) % 251) })), perPart, perItem)
  let peak = new Map<string, number>()
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      for (const w of Object.values(await schedulerWorkers(client))) peak.set(w.name, Math.max(peak.get(w.name) ?? 0, (w.metrics as any).rss ?? 0))
      await new Promise((r) => setTimeout(r, 100))
    }
  })()
  const sizes = items.groupBy('k', { npartitions: 16 }).map(([k, list]: [number, { p: Buffer }[]]) => [k, list.length, list.reduce((a, x) => a + x.p[0], 0)])
  const got = (await client.compute(sizes)) as [number, number, number][]
  sampling = false
  await sampler
  const expected = new Map<number, [number, number]>()
  for (let i = 0; i < parts; i++) {
    for (let j = 0; j < perPart; j++) {
      const k = (i * 7919 + j) % 97
      const e = expected.get(k) ?? [0, 0]
      expected.set(k, [e[0] + 1, e[1] + ((i + j) % 251)])
    }
  }
  t.is(got.length, expected.size)
  for (const [k, n, sum] of got) t.deepEqual([n, sum], expected.get(k), `key ${k}`)
  for (const w of workers) t.true((peak.get(w.name) ?? 0) < w.memoryLimit, `${w.name}: peak rss ${((peak.get(w.name) ?? 0) / GIB).toFixed(2)} GiB under ${(w.memoryLimit / GIB).toFixed(2)} GiB`)
  t.is(c.nannies.reduce((a, n) => a + n.restarts, 0), 0, 'no worker lost')
  const spilled = Object.values(await schedulerWorkers(client)).reduce((a, w) => a + ((w.metrics as any).spillCount ?? 0), 0)
  t.true(spilled > 0, 'shards spilled')
})

test('a worker SIGKILLed while a shuffle reads its outputs: exact, and only the inputs it held or fed run again', async (t) => {
  const { client } = await cluster(t)
  const outputs = 4
  const inputs = 8
  // Keys of input i all go to output i % 4, so each output is fed by two inputs.
  const keysFor = (i: number) => {
    const out: number[] = []
    for (let k = 0; out.length < 20; k++) if (hashKey(k) % outputs === i % outputs) out.push(k)
    return out
  }
  const data = Array.from({ length: inputs }, (_, i) => keysFor(i).flatMap((k) => Array.from({ length: 50 }, (_, j) => ({ k, v: i * 1000 + j }))))
  const b = bag.fromSequence(data, { npartitions: inputs }).flatMap((xs: unknown[]) => xs)
  const slow = b.groupBy('k', { npartitions: outputs }).mapPartitions((groups: Iterable<[number, { v: number }[]]>) => {
    const end = Date.now() + 1500
    while (Date.now() < end);
    return [...groups].map(([k, list]) => [k, list.reduce((a, x) => a + x.v, 0)])
  })
  const pending = client.compute(slow)
  const splits = () => [...client.scheduler.tasks.values()].filter((r) => r.key.includes('-split-'))
  await until(() => splits().length === inputs && splits().every((r) => r.state === 'memory'), 30_000, 'every split done')
  await new Promise((r) => setTimeout(r, 300))
  const victim = Object.values(await schedulerWorkers(client)).find((w) => w.name === 'worker-0')!
  const runsBefore = new Map(splits().map((r) => [r.key, r.runs]))
  const heldThere = new Set(splits().filter((r) => r.worker?.name === 'worker-0').map((r) => r.key))
  process.kill(victim.pid, 'SIGKILL')
  const got = (await pending) as [number, number][]
  const expected = new Map<number, number>()
  for (const xs of data) for (const { k, v } of xs) expected.set(k, (expected.get(k) ?? 0) + v)
  t.deepEqual(new Map([...got].sort((a, b) => a[0] - b[0])), new Map([...expected].sort((a, b) => a[0] - b[0])))
  const rerun = splits().filter((r) => r.runs > runsBefore.get(r.key)!).map((r) => r.key)
  // worker-0 owned outputs 0 and 2 (owners are spread over the workers by name), fed by the even inputs.
  const fed = new Set(splits().filter((r) => Number(r.key.split('-split-')[1]) % 2 === 0).map((r) => r.key))
  for (const k of rerun) t.true(heldThere.has(k) || fed.has(k), `${k} ran again: it was held by the dead worker or fed its outputs`)
  t.true(rerun.length < inputs || heldThere.size + fed.size >= inputs, `only ${rerun.length} of ${inputs} inputs ran again`)
})

test('a shuffle larger than memory and the spill disk together is refused up front with ERR_SPILLWAY_SPILL_FULL naming both', async (t) => {
  const mnt = mkdtempSync(join(tmpdir(), 'spillway-tmpfs-'))
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0700', 'tmpfs', mnt], { encoding: 'utf8' })
  if (r.status !== 0) {
    rmSync(mnt, { recursive: true, force: true })
    t.log(`skipped: cannot mount a tmpfs here (${r.stderr.trim()})`)
    t.pass()
    return
  }
  t.teardown(() => {
    spawnSync('umount', [mnt])
    rmSync(mnt, { recursive: true, force: true })
  })
  const { client } = await cluster(t, { tempBaseDir: mnt })
  // A sparse 8 GB input: planned by its size, never read, since the shuffle is refused first.
  const dir = mkdtempSync(join(tmpdir(), 'spillway-sparse-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const f = join(dir, 'big.txt')
  const fd = openSync(f, 'w')
  ftruncateSync(fd, 8 * 2 ** 30)
  closeSync(fd)
  const before = client.scheduler.totalTasks
  const err = await t.throwsAsync(client.compute(bag.readText(f).groupBy((l: string) => l.length).count()))
  t.is((err as any).code, 'ERR_SPILLWAY_SPILL_FULL')
  t.regex(err!.message, /8\.00 GiB/)
  t.regex(err!.message, /free on the spill disk/)
  t.is(client.scheduler.totalTasks, before, 'nothing was submitted')
})
