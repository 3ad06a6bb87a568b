// Where a task runs: on the worker that already holds most of its input
// bytes, else the least loaded one; `workers` restricts the choice. A task
// whose inputs are large and sit on a worker that is only busy waits for it
// rather than moving them.

import type { Inputs, Request } from '../wire/protocol'
import { shufflesOf, type ShuffleHost } from './shuffle'
import type { TaskRecord, WorkerHandle } from './state'

/** Input bytes worth waiting for their holder rather than moving them. */
export const MOVE_BYTES = 1 << 20

export function allowed(w: WorkerHandle, t: TaskRecord): boolean {
  return !t.restrict || t.restrict.has(w.address) || t.restrict.has(w.name)
}

const takesData = (w: WorkerHandle) => w.alive && !w.unresponsive && w.status === 'running'
const scatterTurns = new WeakMap<object, number>()

/**
 * Where a scattered value goes: the workers in turn, carrying on from the
 * cluster's last scatter (Dask's round robin), so 100 values over 10
 * workers are 10 on each; only those `t` may go to, and none paused.
 */
export function scatterTarget(cluster: object, workers: Iterable<WorkerHandle>, t: TaskRecord): WorkerHandle | undefined {
  const open = [...workers].filter((w) => takesData(w) && allowed(w, t))
  if (!open.length) return undefined
  const turn = scatterTurns.get(cluster) ?? 0
  scatterTurns.set(cluster, turn + 1)
  return open[turn % open.length]
}

/**
 * A worker, 'later' (wait for a busy one), or 'none' (no worker can take
 * anything now). A task taken back from a busy worker (stealing.ts) goes
 * elsewhere, or waits, while that worker's threads stay busy.
 */
export function pickWorker(workers: Iterable<WorkerHandle>, t: TaskRecord, avoidStolen = true): WorkerHandle | 'later' | 'none' {
  const from = t.stolenFrom
  if (avoidStolen && from && from.alive && from.busy >= from.nthreads) {
    const elsewhere = pickWorker([...workers].filter((w) => w !== from), t, false)
    return elsewhere === 'none' ? 'later' : elsewhere
  }
  // A value put on its worker takes none of its threads: it goes where its turn said, unless that worker cannot take it now.
  if (t.preferred && takesData(t.preferred) && allowed(t.preferred, t)) return t.preferred
  t.preferred = undefined
  let best: WorkerHandle | undefined
  let bestIdle = false
  let bestLoad = Infinity
  let anyAvailable = false
  for (const w of workers) {
    if (!w.available) continue
    anyAvailable = true
    if (!allowed(w, t)) continue
    // A worker with a free thread first: one whose threads are all busy
    // would only queue the task behind another.
    const idle = w.busy < w.nthreads
    const load = w.load()
    if ((idle && !bestIdle) || (idle === bestIdle && load < bestLoad)) {
      best = w
      bestIdle = idle
      bestLoad = load
    }
  }
  if (!anyAvailable) return 'none'
  if (t.deps.length === 0) return best ?? 'later'
  const bytesOn = new Map<WorkerHandle, number>()
  let total = 0
  for (const d of t.deps) {
    if (!d.worker) continue
    total += d.nbytes
    bytesOn.set(d.worker, (bytesOn.get(d.worker) ?? 0) + d.nbytes)
  }
  let holder: WorkerHandle | undefined
  let most = -1
  for (const [w, n] of bytesOn) {
    if (allowed(w, t) && w.alive && (n > most || (n === most && holder && w.load() < holder.load()))) {
      holder = w
      most = n
    }
  }
  if (holder?.available) return holder
  if (holder && holder.status === 'running' && most >= MOVE_BYTES && most * 2 >= total) return 'later'
  return best ?? 'later'
}

/** Where a run finds its inputs: held on `w`, or at another worker's data address. */
export function inputsFor(t: TaskRecord, w: WorkerHandle): Inputs {
  // Keyed by user keys: a key named '__proto__' must stay a key.
  const inputs: Inputs = Object.create(null)
  for (const d of t.deps) inputs[d.key] = { format: d.format, nbytes: d.nbytes, address: d.worker && d.worker !== w && !d.replicas?.has(w) ? d.worker.dataAddress : undefined }
  return inputs
}

/** A run as sent to `w`: where its inputs are, and for a shuffle's split, where its outputs' owners listen. */
export function runRequest(t: TaskRecord, w: WorkerHandle, host: ShuffleHost): Extract<Request, { op: 'run' }> {
  return { op: 'run', key: t.key, task: shufflesOf(host).taskToSend(t), inputs: inputsFor(t, w) }
}
