// Whole-array reductions where the chunks live: each worker reduces the
// chunks it holds in batches and sends back partials. A chunk a worker
// cannot read back is made again, at most MAX_RECOMPUTES times per
// reduction.

import { SpillwayError } from '../base/errors'
import type { ReducePartial } from '../native/spill-buffer'
import type { ReduceManyResult } from '../wire/protocol'
import { WorkerLostError } from '../comm/rpc'
import type { TaskRecord } from './state'
import type { WorkerHandle } from './state'

/** Keys per reduce request: tiny chunks then cost one round trip per batch. */
const REDUCE_BATCH = 64

/** Times one reduction recomputes a chunk its worker could not read back before failing it. */
export const MAX_RECOMPUTES = 3

/** What a reduction needs of the scheduler (declared here, so the scheduler and this file do not import each other). */
export interface ReductionHost {
  record(key: string): TaskRecord
  recompute(t: TaskRecord, w: WorkerHandle): void
}

/** `onReduced` hears keys whose partial is in (an array never persisted lets go of them). */
export async function reduceWhereHeld(s: ReductionHost, keys: string[], dtype: string, op: string, concurrency = 8, onReduced?: (keys: string[]) => void): Promise<ReducePartial[]> {
  const out: ReducePartial[] = new Array(keys.length)
  const records = keys.map((k) => s.record(k))
  const recomputes = new Map<TaskRecord, number>()
  let remaining = records.map((_, i) => i)
  while (remaining.length) {
    const byWorker = new Map<WorkerHandle, number[]>()
    for (const i of remaining) {
      const t = records[i]
      if (t.state === 'erred') throw t.error
      if (t.state !== 'memory' || !t.worker?.alive) continue
      const list = byWorker.get(t.worker) ?? byWorker.set(t.worker, []).get(t.worker)!
      list.push(i)
    }
    if (byWorker.size === 0) {
      // Nothing reducible yet: wait for the next chunk to land.
      await Promise.race(remaining.map((i) => records[i].whenInMemory()))
      continue
    }
    const batches: Array<[WorkerHandle, number[]]> = []
    for (const [w, idx] of byWorker) {
      for (let j = 0; j < idx.length; j += REDUCE_BATCH) batches.push([w, idx.slice(j, j + REDUCE_BATCH)])
    }
    const done = new Set<number>()
    let next = 0
    const lane = async () => {
      while (next < batches.length) {
        const [w, idx] = batches[next++]
        let lost: SpillwayError | undefined
        try {
          const res = await w.rpc.request<ReduceManyResult>({ op: 'reduce-many', keys: idx.map((i) => keys[i]), dtype, reduceOp: op })
          const unreadable = new Map((res.unreadable ?? []).map((u) => [u.key, u]))
          res.partials.forEach((p, j) => {
            if (p) {
              out[idx[j]] = p
              done.add(idx[j])
              return
            }
            const t = records[idx[j]]
            // Not held where the scheduler placed it (a spill file gone or
            // corrupt, or the chunk missing): compute it again from its task.
            if (t.state === 'memory' && t.worker === w) {
              const u = unreadable.get(t.key)
              const n = (recomputes.get(t) ?? 0) + 1
              recomputes.set(t, n)
              s.recompute(t, w)
              if (n > MAX_RECOMPUTES) lost ??= chunkLost(t.key, w.address, u ? `${u.code}: ${u.message}` : 'the worker no longer held it')
            }
          })
          if (lost) throw lost
          onReduced?.(idx.filter((i) => done.has(i)).map((i) => keys[i]))
        } catch (err) {
          if (err === lost || !(err instanceof WorkerLostError || !w.alive)) throw err
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, lane))
    const before = remaining.length
    remaining = remaining.filter((i) => !done.has(i))
    // Yield so a lost worker is processed before the next round.
    if (remaining.length === before) await new Promise((r) => setTimeout(r, 10))
  }
  return out
}

/**
 * A chunk that could not be read back MAX_RECOMPUTES times in one reduction
 * (a disk losing every write). Its task stays queued, so a later reduction
 * finds it again.
 */
function chunkLost(key: string, worker: string, reason: string): SpillwayError {
  return new SpillwayError(
    'ERR_SPILLWAY_CHUNK_LOST',
    `chunk ${JSON.stringify(key)} could not be read back after ${MAX_RECOMPUTES} recomputes (last on ${worker}: ${reason})`,
    { key, worker, recomputes: MAX_RECOMPUTES, reason },
  )
}

