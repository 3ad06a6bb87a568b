// Fuzzing the scheduler's side of the worker protocol: an authenticated
// peer joins again and again and sends random messages and valid ones with
// a part changed, for a bounded time. The scheduler must live (an exception
// would end this test process) and the cluster still compute exact results.
import test from 'ava'
import { join } from 'node:path'
import { setupClient } from 'spillway'
import { writeFrame } from '../src/comm/frames'
import { until } from './cluster-helpers'
import { scratch } from './helpers'
import { fakeWorker, goodMetrics, type Peer } from './peer-helpers'

const FUZZ_MS = 3000

function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32
  }
}

function fuzzer(rand: () => number) {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]
  const value = (depth = 0): unknown => {
    const atoms = [null, undefined, 0, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 53, '', 'x', 'run', true, false, 10n]
    if (depth > 2 || rand() < 0.6) return pick(atoms)
    if (rand() < 0.5) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1))
    return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, () => [pick(['kind', 'id', 'ok', 'result', 'metrics', 'nbytes', 'x']), value(depth + 1)]))
  }
  /** One part of `m` (at any depth) removed or replaced. */
  const mutate = (m: any): any => {
    if (m === null || typeof m !== 'object') return value()
    const copy: any = Array.isArray(m) ? [...m] : { ...m }
    const keys = Object.keys(copy)
    if (!keys.length) return value()
    const k = pick(keys)
    const r = rand()
    if (r < 0.2) delete copy[k]
    else if (r < 0.6) copy[k] = value()
    else copy[k] = mutate(copy[k])
    return copy
  }
  return { pick, value, mutate, rand }
}

test('random and mutated messages from an authenticated peer: the scheduler lives and the cluster computes exact results', async (t) => {
  t.timeout(120_000)
  const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1e9)
  t.log(`seed ${seed} (FUZZ_SEED=${seed} repeats this run)`)
  const f = fuzzer(prng(seed))
  const file = join(scratch(t), 'scheduler.json')
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1, dashboard: false, silenceLogs: true, schedulerFile: file })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  // Work for the peer to be asked about: runs, metrics, reductions.
  const busy = async () => {
    const parts = client.map((i: number) => i + 1, Array.from({ length: 8 }, (_, i) => i), { pure: false })
    await Promise.allSettled(parts.map((p) => p.result()))
    await client.scheduler.refreshMetrics().catch(() => {})
  }
  const valid = (p: Peer): any[] => {
    const asked = p.requests.at(-1)
    const id = asked?.id ?? f.pick([1, 2, 3])
    const results: Record<string, unknown> = {
      run: { nbytes: 8, format: 'v8' },
      put: { nbytes: 8 },
      metrics: { metrics: goodMetrics() },
      release: { metrics: goodMetrics() },
      reduce: { partial: { count: 1, sum: 1, comp: 0, min: 1, max: 1, m2: 0 } },
    }
    return [
      { kind: 'heartbeat', metrics: goodMetrics() },
      { kind: 'log', level: 'info', message: 'fuzz' },
      { kind: 'reply', id, ok: true, result: results[asked?.request?.op] ?? {} },
      { kind: 'reply', id, ok: false, error: { code: 'ERR_SPILLWAY_TASK', message: 'fuzz' } },
    ]
  }
  const end = Date.now() + FUZZ_MS
  let sent = 0
  let joins = 0
  while (Date.now() < end) {
    const peer = await fakeWorker(file, `fuzz-${joins++}`)
    const work = busy()
    let open = true
    void peer.closed.then(() => (open = false))
    for (let n = 0; open && n < 50 && Date.now() < end; n++) {
      const r = f.rand()
      if (r < 0.05) await writeFrame((peer.link as any).socket, [Buffer.from(Array.from({ length: 16 }, () => Math.floor(f.rand() * 256)))]).catch(() => {})
      else if (r < 0.25) peer.link.send(f.value())
      else if (r < 0.5) peer.link.send(f.pick(valid(peer)))
      else peer.link.send(f.mutate(f.pick(valid(peer))))
      sent++
      await new Promise((res) => setTimeout(res, 2))
    }
    peer.link.destroy()
    await peer.closed
    await work
  }
  t.log(`${sent} messages over ${joins} connections; ${cluster.malformed.total} closed for a malformed message`)
  t.true(cluster.malformed.total > 0, 'the fuzzer sent malformed messages')
  await until(() => client.scheduler.workers.size === 1, 20_000, 'only the real worker is left')
  const parts = client.map((i: number) => i * 3, Array.from({ length: 20 }, (_, i) => i), { pure: false })
  const values: number[] = await client.gather(parts)
  t.deepEqual(values, Array.from({ length: 20 }, (_, i) => i * 3))
  t.is(await client.submit((a: number, b: number) => a + b, [2, 3]).result(), 5)
})
