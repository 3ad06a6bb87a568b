// rebalance() and replicate(): values copied between workers over their
// data sockets (copy-values.ts). rebalance moves values by Dask's rule
// (rebalance-rule.ts); replicate keeps `n` copies of each value, adding
// them on the workers with the most room and dropping any beyond `n`.

import { copyValues, roomOn, type CopyHost } from './copy-values'
import { planRebalance, type RebalanceRule } from './rebalance-rule'
import { canTakeOver, dropReplica, holders, moveHolder } from './replicas'
import type { TaskRecord, WorkerHandle } from './state'

/** What these need of the scheduler. */
export interface MoveHost extends CopyHost {
  readonly workers: Map<string, WorkerHandle>
  readonly thresholds: { pause: number }
}

export interface RebalanceResult {
  moved: number
  movedBytes: number
}

const eligible = (w: WorkerHandle) => w.alive && !w.retiring && !w.closing && !w.unresponsive && w.status === 'running'

/** Copies grouped by (from, to), run at once; `onCopied` hears each value now on `to` too. */
async function copyAll(host: MoveHost, pairs: Array<{ t: TaskRecord; from: WorkerHandle; to: WorkerHandle }>, onCopied: (t: TaskRecord, from: WorkerHandle, to: WorkerHandle) => void): Promise<void> {
  const groups = new Map<WorkerHandle, Map<WorkerHandle, TaskRecord[]>>()
  for (const { t, from, to } of pairs) {
    const byTo = groups.get(from) ?? groups.set(from, new Map()).get(from)!
    byTo.get(to)?.push(t) ?? byTo.set(to, [t])
  }
  const jobs: Promise<void>[] = []
  for (const [from, byTo] of groups) {
    for (const [to, ts] of byTo) {
      jobs.push(
        copyValues(host, from, to, ts).then(
          (o) => o.copied.forEach((t) => onCopied(t, from, to)),
          () => {}, // a worker lost meanwhile: its values are the scheduler's to recover
        ),
      )
    }
  }
  await Promise.all(jobs)
}

/** Moves values from the workers holding the most to those holding the least (Dask's rule); only `keys` when given. */
export async function rebalance(host: MoveHost, keys?: Set<string>, rule?: RebalanceRule): Promise<RebalanceResult> {
  const workers = [...host.workers.values()].filter(eligible)
  const plan = planRebalance(
    workers.map((w) => ({
      worker: w,
      memory: w.heldBytes,
      memoryLimit: w.memoryLimit,
      values: [...w.held].filter((t) => t.state === 'memory' && (!keys || keys.has(t.key))).map((t) => ({ key: t.key, nbytes: t.nbytes, on: t.replicas })),
    })),
    rule,
  )
  const result: RebalanceResult = { moved: 0, movedBytes: 0 }
  const records = new Map<string, TaskRecord>()
  for (const w of workers) for (const t of w.held) records.set(t.key, t)
  const pairs = plan.map((m) => ({ t: records.get(m.key)!, from: m.from, to: m.to }))
  await copyAll(host, pairs, (t, from, to) => {
    if (!canTakeOver(t, from, to)) return
    moveHolder(host, t, to)
    result.moved++
    result.movedBytes += t.nbytes
  })
  return result
}

/** Keeps `n` copies of each value (every running worker when n ≥ their count): copies added where there is most room, extra ones dropped. */
export async function replicate(host: MoveHost, tasks: TaskRecord[], n: number): Promise<void> {
  const workers = [...host.workers.values()].filter(eligible)
  const want = Math.min(n, workers.length)
  // A worker paused for a moment takes no new copy, but its copies are not dropped for it.
  const keep = Math.min(n, [...host.workers.values()].filter((w) => w.alive && !w.closing).length)
  const pairs: Array<{ t: TaskRecord; from: WorkerHandle; to: WorkerHandle }> = []
  const room = new Map(workers.map((w) => [w, roomOn(w, host.thresholds.pause)]))
  for (const t of tasks) {
    if (t.state !== 'memory' || !t.worker) continue
    const have = holders(t)
    if (have.length > keep) {
      for (const r of have.filter((w) => w !== t.worker).slice(0, have.length - keep)) {
        dropReplica(t, r)
        host.releaseCopy(r, t.key)
      }
      continue
    }
    const to = workers.filter((w) => !have.includes(w)).sort((a, b) => room.get(b)! - room.get(a)!).slice(0, want - have.length)
    for (const w of to) {
      room.set(w, room.get(w)! - t.nbytes)
      pairs.push({ t, from: t.worker, to: w })
    }
  }
  // copyValues made each landed copy a replica already.
  await copyAll(host, pairs, () => {})
}
