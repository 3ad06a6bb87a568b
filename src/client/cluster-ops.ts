// What the client asks of the cluster as a whole, as Dask's Client does:
// run a function on every worker, restart them all, say who holds what,
// retire workers gracefully, rebalance and replicate values. The Client's
// methods forward here, one line each.

import { ArgumentError, SpillwayError } from '../base/errors'
import type { LocalCluster } from '../deploy/local-cluster'
import { rebalance, replicate, type RebalanceResult } from '../scheduler/rebalance'
import { holders } from '../scheduler/replicas'
import type { RetireOptions, RetireReport } from '../scheduler/retire'
import type { Scheduler } from '../scheduler/scheduler'
import type { WorkerHandle } from '../scheduler/state'
import { describeFunction, type TaskFunction } from '../wire/functions'
import type { CallResult } from '../wire/protocol'
import { decodeValue } from '../wire/values'
import { workerError } from '../comm/rpc'

/** Anything that names a key: a Future, or the key itself. */
export type KeyLike = string | { key: string }

export interface WorkersOption {
  /** Worker addresses or names; every worker when left out. */
  workers?: string[]
}

const keyOf = (k: KeyLike, field: string): string => {
  if (typeof k === 'string') return k
  if (k && typeof k === 'object' && typeof k.key === 'string') return k.key
  throw new ArgumentError([{ field, value: k, allowed: 'a Future or a key (string)' }], 'client call')
}

export function keysOf(items: KeyLike | Iterable<KeyLike>, field: string): string[] {
  if (typeof items === 'string' || (items && typeof items === 'object' && 'key' in items)) return [keyOf(items as KeyLike, field)]
  if (!items || typeof (items as Iterable<KeyLike>)[Symbol.iterator] !== 'function') throw new ArgumentError([{ field, value: items, allowed: 'a Future, a key, or an array of them' }], 'client call')
  return [...(items as Iterable<KeyLike>)].map((k, i) => keyOf(k, `${field}[${i}]`))
}

/** The live workers `names` (addresses or names) pick; every one when undefined. An unknown name is an error that lists the known ones. */
export function pickWorkers(s: Scheduler, names: string[] | undefined, field = 'workers'): WorkerHandle[] {
  const all = [...s.workers.values()]
  if (names === undefined) return all
  if (!Array.isArray(names)) throw new ArgumentError([{ field, value: names, allowed: 'an array of worker addresses or names' }], 'client call')
  return names.map((n, i) => {
    const w = all.find((x) => x.address === n || x.name === n)
    if (!w) throw new ArgumentError([{ field: `${field}[${i}]`, value: n, allowed: `a live worker's address or name: ${all.map((x) => `${x.address} (${x.name})`).join(', ') || 'none is running'}` }], 'client call')
    return w
  })
}

/** `{ key: [addresses holding it] }` for each key (an empty list for one no worker holds). */
export function whoHas(s: Scheduler, keys?: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null)
  for (const k of keys ?? s.tasks.keys()) {
    const t = s.tasks.get(k)
    out[k] = t && t.state === 'memory' ? holders(t).map((w) => w.address) : []
  }
  return out
}

/** `{ address: [keys it holds] }` for every live worker, replicas included. */
export function hasWhat(s: Scheduler): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null)
  for (const w of s.workers.values()) out[w.address] = [...w.held, ...w.replicas].filter((t) => t.state === 'memory').map((t) => t.key)
  return out
}

/** Calls `fn(...args)` on each worker, outside the task graph: `{ address: result }`; a throw rejects with ERR_SPILLWAY_TASK naming the worker. */
export async function runOnWorkers(s: Scheduler, fn: TaskFunction, args: unknown[], options: WorkersOption): Promise<Record<string, unknown>> {
  const func = describeFunction(fn)
  if (!Array.isArray(args)) throw new ArgumentError([{ field: 'args', value: args, allowed: 'an array of arguments' }], 'client.run')
  const workers = pickWorkers(s, options.workers, 'options.workers')
  const out: Record<string, unknown> = Object.create(null)
  await Promise.all(
    workers.map(async (w) => {
      try {
        const r = await w.rpc.request<CallResult>({ op: 'call', func, args })
        out[w.address] = decodeValue(r.value, r.format)
      } catch (e: any) {
        if (e instanceof SpillwayError) {
          e.message = `on worker ${w.address}: ${e.message}`
          throw e
        }
        throw workerError({ message: `on worker ${w.address}: ${e?.message ?? e}` })
      }
    }),
  )
  return out
}

/**
 * Kills every worker and starts it afresh, as Dask's restart: every task is
 * cancelled and forgotten first (their Futures then say 'cancelled', failed
 * ones included), scattered values too. Resolves once the workers are back.
 */
export async function restart(cluster: LocalCluster, timeoutMs?: number): Promise<void> {
  cluster.scheduler.cancelAndForgetAll(': client.restart() restarted the cluster')
  await cluster.restartWorkers(timeoutMs)
}

export async function retire(s: Scheduler, workers: string[], options: RetireOptions): Promise<RetireReport[]> {
  const picked = [...new Set(pickWorkers(s, workers))]
  if (!picked.length) return []
  if (picked.length >= s.workers.size) {
    throw new SpillwayError('ERR_SPILLWAY_RETIRE_FAILED', `cannot retire every worker (${picked.length} of ${s.workers.size}): their values would have nowhere to go`, { workers })
  }
  return s.retireWorkers(picked, options)
}

/** As Dask's Client.rebalance: the values of `keys` still being computed are waited for first (one that fails is left out). */
export async function rebalanceValues(s: Scheduler, keys?: string[]): Promise<RebalanceResult> {
  if (keys) await Promise.all(keys.map((k) => s.tasks.get(k)?.whenDone()))
  return rebalance(s, keys ? new Set(keys) : undefined)
}

export async function replicateValues(s: Scheduler, keys: string[], n: number | undefined): Promise<void> {
  if (n !== undefined && !(Number.isSafeInteger(n) && n >= 1)) throw new ArgumentError([{ field: 'n', value: n, allowed: 'a whole number ≥ 1 (copies of each value)' }], 'client.replicate')
  await s.waitFor(keys)
  await replicate(s, keys.map((k) => s.record(k)), n ?? s.workers.size)
}

/** Resolves once at least `n` workers are connected; ERR_SPILLWAY_TIMEOUT after `options.timeout` ms. */
export async function waitForWorkers(s: Scheduler, n: number, options: { timeout?: number }): Promise<void> {
  if (!(Number.isInteger(n) && n >= 0)) throw new ArgumentError([{ field: 'n', value: n, allowed: 'an integer ≥ 0' }], 'waitForWorkers arguments')
  const t = options.timeout
  if (t !== undefined && !(typeof t === 'number' && t >= 0)) throw new ArgumentError([{ field: 'options.timeout', value: t, allowed: 'milliseconds ≥ 0' }], 'waitForWorkers options')
  if (s.workers.size >= n) return
  await new Promise<void>((resolve, reject) => {
    const timer = t === undefined ? undefined : setTimeout(() => done(new SpillwayError('ERR_SPILLWAY_TIMEOUT', `${s.workers.size} of ${n} workers after ${t} ms`, { have: s.workers.size, want: n, timeout: t })), t)
    const onAdded = () => s.workers.size >= n && done()
    const done = (err?: Error) => {
      clearTimeout(timer)
      s.off('worker-added', onAdded)
      err ? reject(err) : resolve()
    }
    s.on('worker-added', onAdded)
  })
}
