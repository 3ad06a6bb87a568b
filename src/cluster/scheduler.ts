// The scheduler: places chunk tasks on workers (balanced by bytes held),
// tracks where every chunk lives, and recomputes what a dead worker held.
// Chunk data never passes through here: only keys, sizes and partials.

import { EventEmitter } from 'node:events'
import { KilledWorkerError, SpillwayError } from '../errors'
import type { Partial } from '../spill-buffer'
import type { ReduceManyResult, RunResult, TaskFn, Thresholds, WorkerMetrics } from './protocol'
import { WorkerLostError } from './rpc'
import { TaskRecord } from './task-record'
import type { WorkerHandle } from './worker-handle'

/** A task killing this many workers fails with KilledWorkerError (Dask's allowed-failures + 1). */
export const ALLOWED_KILLS = 3

/** Keys per reduce request: tiny chunks then cost one round trip per batch. */
const REDUCE_BATCH = 64

/** Times one reduction recomputes a chunk its worker could not read back before failing it. */
export const MAX_RECOMPUTES = 3

export interface TaskSubmission {
  key: string
  task: TaskFn
  expectedBytes: number
}

export interface ClusterTotals {
  workers: number
  memoryBytes: number
  spillBytes: number
}

export class Scheduler extends EventEmitter {
  readonly workers = new Map<string, WorkerHandle>()
  readonly tasks = new Map<string, TaskRecord>()
  readonly startedAt = Date.now()
  #queue: TaskRecord[] = []
  #closed = false
  totalTasks = 0
  peakMemoryBytes = 0
  peakSpillBytes = 0
  lostWorkers = 0
  thresholds: Thresholds

  constructor(thresholds: Thresholds) {
    super()
    this.thresholds = { ...thresholds }
  }

  get closed(): boolean {
    return this.#closed
  }

  addWorker(w: WorkerHandle): void {
    this.workers.set(w.address, w)
    this.emit('worker-added', w)
    this.pump()
  }

  /** A worker is gone: what it ran is suspect, what it held is recomputed. */
  removeWorker(w: WorkerHandle, reason: string): void {
    if (!w.alive) return
    w.alive = false
    this.workers.delete(w.address)
    this.lostWorkers++
    for (const t of w.processing) {
      t.suspicious++
      t.lastWorker = w.address
      t.worker = undefined
      if (t.suspicious >= ALLOWED_KILLS) {
        t.state = 'erred'
        t.error = new KilledWorkerError(t.key, t.suspicious, w.address)
      } else {
        t.state = 'queued'
        this.#queue.unshift(t)
      }
      t.settle()
    }
    for (const t of w.held) {
      t.state = 'queued'
      t.worker = undefined
      this.#queue.push(t)
    }
    w.processing.clear()
    w.held.clear()
    w.heldBytes = 0
    this.emit('worker-removed', w, reason)
    this.pump()
  }

  onHeartbeat(w: WorkerHandle, m: WorkerMetrics): void {
    const wasPaused = w.status === 'paused'
    w.metrics = m
    const t = this.totals()
    this.peakMemoryBytes = Math.max(this.peakMemoryBytes, t.memoryBytes)
    this.peakSpillBytes = Math.max(this.peakSpillBytes, t.spillBytes)
    if (wasPaused && m.status === 'running') this.pump()
  }

  totals(): ClusterTotals {
    let memoryBytes = 0
    let spillBytes = 0
    for (const w of this.workers.values()) {
      if (!w.metrics) continue
      memoryBytes += w.metrics.managedBytes - w.metrics.spilledBytes.memory
      spillBytes += w.metrics.spilledBytes.disk
    }
    return { workers: this.workers.size, memoryBytes, spillBytes }
  }

  /** Adds tasks; a key already held or running is not computed again. */
  submit(subs: TaskSubmission[]): TaskRecord[] {
    if (this.#closed) throw new SpillwayError('ERR_SPILLWAY_CLOSED', 'the cluster is closed')
    const out: TaskRecord[] = []
    for (const s of subs) {
      let t = this.tasks.get(s.key)
      if (!t || t.state === 'erred') {
        t = new TaskRecord(s.key, s.task, s.expectedBytes)
        this.tasks.set(s.key, t)
        this.#queue.push(t)
        this.totalTasks++
      }
      out.push(t)
    }
    this.pump()
    return out
  }

  async waitFor(keys: string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.#record(k).whenInMemory()))
  }

  #record(key: string): TaskRecord {
    const t = this.tasks.get(key)
    if (!t) throw new SpillwayError('ERR_SPILLWAY_UNKNOWN_KEY', `key ${JSON.stringify(key)} is not held by the cluster (released or never persisted)`, { key })
    return t
  }

  /** The least loaded worker free to take a task. */
  #pick(): WorkerHandle | undefined {
    let best: WorkerHandle | undefined
    let bestLoad = Infinity
    for (const w of this.workers.values()) {
      if (!w.available) continue
      const load = w.load()
      if (load < bestLoad) {
        best = w
        bestLoad = load
      }
    }
    return best
  }

  pump(): void {
    while (this.#queue.length && !this.#closed) {
      const w = this.#pick()
      if (!w) return
      const t = this.#queue.shift()!
      if (t.state === 'queued') this.#run(t, w)
    }
  }

  #run(t: TaskRecord, w: WorkerHandle): void {
    t.state = 'processing'
    t.worker = w
    w.processing.add(t)
    w.inflight++
    w.rpc
      .request<RunResult>({ op: 'run', key: t.key, task: t.task })
      .then(
        (res) => {
          if (!w.alive) return
          if (t.worker !== w || t.state !== 'processing') {
            // Released while running: the worker stored the chunk after (or
            // without) seeing the release, so nothing would ever free it.
            this.#discard(t.key, w)
            return
          }
          w.processing.delete(t)
          t.state = 'memory'
          t.nbytes = res.nbytes
          w.held.add(t)
          w.heldBytes += res.nbytes
          if (res.metrics) this.onHeartbeat(w, res.metrics)
          t.settle()
        },
        (err) => {
          // A lost worker is handled by removeWorker; anything else is the
          // task's own failure.
          if (err instanceof WorkerLostError || !w.alive || t.worker !== w) return
          w.processing.delete(t)
          t.state = 'erred'
          t.error = err
          t.settle()
        },
      )
      .finally(() => {
        w.inflight--
        this.pump()
      })
  }

  /**
   * Reduces each key where it lives, in batches per worker, recomputing the
   * chunks of lost workers and those a worker can no longer read back.
   * `releaseEach` frees chunks once reduced (for arrays never persisted).
   */
  async reduce(keys: string[], dtype: string, op: string, concurrency = 8, releaseEach = false): Promise<Partial[]> {
    const out: Partial[] = new Array(keys.length)
    const records = keys.map((k) => this.#record(k))
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
                this.#recompute(t, w)
                if (n > MAX_RECOMPUTES) lost ??= chunkLost(t.key, w.address, u ? `${u.code}: ${u.message}` : 'the worker no longer held it')
              }
            })
            if (lost) throw lost
            if (releaseEach) this.release(idx.filter((i) => done.has(i)).map((i) => keys[i]))
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

  /** Drops a chunk its worker cannot hand back and queues its task again. */
  #recompute(t: TaskRecord, w: WorkerHandle): void {
    w.held.delete(t)
    w.heldBytes -= t.nbytes
    t.worker = undefined
    t.state = 'queued'
    this.#queue.unshift(t)
    // Sent before the task can be placed again, so it never deletes a rerun
    // on this worker.
    w.rpc.request({ op: 'release', keys: [t.key] }).catch(() => {})
    this.pump()
  }

  /** Frees the chunk a run produced after its key was released, unless the key was submitted again and lives there now. */
  #discard(key: string, w: WorkerHandle): void {
    const current = this.tasks.get(key)
    if (current?.worker === w && (current.state === 'processing' || current.state === 'memory')) return
    w.rpc.request({ op: 'release', keys: [key] }).catch(() => {})
  }

  /** Forgets keys and frees them on their workers. */
  release(keys: string[]): void {
    const byWorker = new Map<WorkerHandle, string[]>()
    for (const k of keys) {
      const t = this.tasks.get(k)
      if (!t) continue
      this.tasks.delete(k)
      const w = t.worker
      if (t.state === 'memory' && w) {
        w.held.delete(t)
        w.heldBytes -= t.nbytes
      }
      // A running task no longer counts towards its worker's load, nor is
      // it rerun if that worker dies; its result is discarded when it lands.
      if (w) w.processing.delete(t)
      t.worker = undefined
      if (w) (byWorker.get(w) ?? byWorker.set(w, []).get(w)!).push(k)
      t.state = 'erred'
      t.error = new SpillwayError('ERR_SPILLWAY_RELEASED', `key ${k} was released`)
      t.settle()
    }
    this.#queue = this.#queue.filter((t) => this.tasks.get(t.key) === t)
    for (const [w, ks] of byWorker) w.rpc.request({ op: 'release', keys: ks }).catch(() => {})
  }

  /** Applies new thresholds on every live worker at once. */
  async setThresholds(t: Partial_<Thresholds>): Promise<void> {
    this.thresholds = { ...this.thresholds, ...t }
    await Promise.all(
      [...this.workers.values()].map((w) =>
        w.rpc
          .request<{ metrics: WorkerMetrics }>({ op: 'set-thresholds', thresholds: t })
          .then((r) => this.onHeartbeat(w, r.metrics))
          .catch((e) => {
            if (!(e instanceof WorkerLostError)) throw e
          }),
      ),
    )
  }

  /** Fresh metrics from every worker (the last heartbeat if one is lost). */
  async refreshMetrics(): Promise<void> {
    await Promise.all(
      [...this.workers.values()].map((w) =>
        w.rpc
          .request<{ metrics: WorkerMetrics }>({ op: 'metrics' })
          .then((r) => this.onHeartbeat(w, r.metrics))
          .catch(() => {}),
      ),
    )
  }

  close(): void {
    this.#closed = true
    const err = new SpillwayError('ERR_SPILLWAY_CLOSED', 'the cluster was closed')
    for (const t of this.tasks.values()) {
      if (t.state === 'queued' || t.state === 'processing') {
        t.state = 'erred'
        t.error = err
        t.settle()
      }
    }
    this.#queue = []
  }
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

type Partial_<T> = { [K in keyof T]?: T[K] }
