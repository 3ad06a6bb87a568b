// The scheduler: a graph of tasks (built-in chunks, user calls, scattered
// values), placed on workers where their inputs are, tracked to whoever
// holds each value, and made again when a worker dies. Values never pass
// through here: only keys, sizes, addresses and partials.

import { EventEmitter } from 'node:events'
import { ClusterClosedError, SpillwayError } from '../base/errors'
import type { ValueFormat } from '../wire/values'
import type { ReducePartial } from '../native/spill-buffer'
import { pickWorker, runRequest, scatterTarget } from './placement'
import type { RunResult, Thresholds, WorkerMetrics } from '../wire/protocol'
import { reduceWhereHeld } from './reductions'
import { WorkerLostError } from '../comm/rpc'
import type { ScatterBackup } from './scatter-backup'
import { TaskQueue } from './task-queue'
import { askAll } from './ask-all'
import { settleStuckWork } from './stuck-work'
import { Lifetimes } from './lifetimes'
import { TaskRecord, type TaskSubmission, type WorkerHandle } from './state'
import { Restrictions } from './restrictions'
import { watchForSteals } from './stealing'
import { CANCEL_GRACE_MS, markUnresponsive, RELEASED_GRACE_MS, RESPONSE_TIMEOUT_MS, stopRun } from './watchdog'
import { clusterTotals, type ClusterTotals } from './totals'
import { missingInputs, recomputeValue } from './peer-gone'
import { onHeartbeat } from './heartbeat'
import { forgetReplicasOn, promoteReplica } from './replicas'
import { killedWorker } from './task-input'
import { retireAsked, retireWorkers, type RetireOptions, type RetireReport } from './retire'
import { cancelAndForgetAll } from './restart-tasks'

export type { TaskSubmission } from './state'
export { MAX_RECOMPUTES } from './reductions'
export type { ClusterTotals } from './totals'

/** A task killing this many workers fails with KilledWorkerError (Dask's allowed-failures + 1). */
export const ALLOWED_KILLS = 3

const live = (s: TaskRecord['state']) => s === 'waiting' || s === 'queued' || s === 'processing'

export class Scheduler extends EventEmitter {
  readonly workers = new Map<string, WorkerHandle>()
  readonly tasks = new Map<string, TaskRecord>()
  readonly startedAt = Date.now()
  readonly queue = new TaskQueue()
  #closed = false
  #seq = 0
  // A run no one wants any more is aborted (watchdog.ts): an explicit cancel gives it CANCEL_GRACE_MS to stop, a release releasedGraceMs.
  readonly #life = new Lifetimes(this.tasks, () => this.backup, (t, w, ms) => stopRun(this, w, t.key, this.#sent.get(t), ms ?? this.releasedGraceMs, ms === undefined ? 'released' : 'cancelled'))
  readonly #restrictions = new Restrictions(this)
  readonly #slow = (w: WorkerHandle) => markUnresponsive(this, w, RESPONSE_TIMEOUT_MS)
  readonly #sent = new WeakMap<TaskRecord, Promise<unknown>>() // each task's latest run: has a cancelled one stopped?
  totalTasks = 0
  peakMemoryBytes = 0
  peakSpillBytes = 0
  lostWorkers = 0
  thresholds: Thresholds
  /** A worker paused by unmanaged memory this long is retired and restarted (paused-restart.ts). */
  pausedRestartMs = 60_000
  /** A running task whose key no one holds any more (released, garbage-collected) that has not stopped this long has its worker restarted. */
  releasedGraceMs = RELEASED_GRACE_MS
  /** Copies of scattered values, to restore them when their holder dies. */
  backup: ScatterBackup | undefined

  /** Work a busy worker has not started goes to an idle one (stealing.ts). */
  readonly #stopStealing = watchForSteals(this)

  constructor(thresholds: Thresholds) {
    super()
    this.thresholds = { ...thresholds }
  }

  get closed(): boolean {
    return this.#closed
  }

  addWorker(w: WorkerHandle): void {
    this.workers.set(w.address, w)
    this.#restrictions.joined(w)
    this.emit('worker-added', w)
    this.pump()
  }

  /** A worker is gone: what it ran is suspect, what it held is made again. */
  removeWorker(w: WorkerHandle, reason: string): void {
    if (!w.alive) return
    w.alive = false
    this.workers.delete(w.address)
    if (!w.expectedExit) this.lostWorkers++
    // Only what it was running counts toward allowedFailures, not the tasks
    // sent ahead behind them: a worker starts its runs in the order they
    // were sent, so those are the first of `processing` (a Set, in send order).
    let running = w.nthreads + w.seceded
    for (const t of w.processing) {
      if (running-- > 0) t.suspicious++
      t.lastWorker = w.address
      t.worker = undefined
      if (t.suspicious >= ALLOWED_KILLS) this.fail(t, killedWorker(t, w, reason))
      else this.requeue(t, true)
    }
    const held = [...w.held]
    w.processing.clear()
    w.held.clear()
    w.heldBytes = 0
    forgetReplicasOn(w)
    for (const t of held) {
      t.worker = undefined
      if (promoteReplica(t)) continue
      if (t.needed) this.requeue(t, false)
      else this.#life.forgetOrRelease(t)
    }
    this.emit('worker-removed', w, reason)
    this.#restrictions.left(w)
    this.pump()
  }

  onHeartbeat(w: WorkerHandle, m: WorkerMetrics): void {
    onHeartbeat(this, w, m)
  }

  totals = (): ClusterTotals => clusterTotals(this.workers)

  /** No worker of this name will come back (its nanny gave up): work only it could run fails. */
  workerGone(name: string): void {
    this.#restrictions.gone(name)
  }

  #check(): void {
    if (this.#closed) throw new SpillwayError('ERR_SPILLWAY_CLOSED', 'the cluster is closed')
  }

  /**
   * Adds tasks, each held once more by the caller (`release` lets go). A key
   * already known is not computed again; one whose value was freed is made
   * again.
   */
  submit(subs: TaskSubmission[]): TaskRecord[] {
    this.#check()
    const out: TaskRecord[] = []
    for (const s of subs) {
      let t = this.tasks.get(s.key)
      const fresh = !t || t.state === 'erred'
      if (!t || fresh) {
        t = new TaskRecord(s.key, s.task, s.expectedBytes)
        t.deps = (s.deps ?? []).map((k) => this.record(k))
        if (s.format) t.format = s.format
        t.group = s.group ?? s.key.replace(/-\d+$/, '')
        t.priority = s.priority ?? 0
        t.retries = s.retries ?? 0
        t.restrict = s.workers?.length ? new Set(s.workers) : undefined
        t.seq = ++this.#seq
        for (const d of t.deps) d.dependents.add(t)
        this.tasks.set(s.key, t)
        this.totalTasks++
      } else if (t.state === 'released') this.requeue(t, false)
      // Held before it can fail, so one failed at once by an erred input stays, with that error, for its Future.
      if (s.hold !== false) t.refs++
      const failed = fresh ? t.deps.find((d) => d.state === 'erred') : undefined
      if (failed) this.fail(t, failed.error!)
      else if (fresh) this.requeue(t, false)
      out.push(t)
    }
    for (const t of out) this.#restrictions.failIfUnmet(t) // once held, so the Future sees the error
    this.pump()
    return out
  }

  /** A value the client hands over: stored on a worker, with a backup to restore it from. */
  async scatter(key: string, bytes: Buffer, format: ValueFormat, options: { workers?: string[] } = {}): Promise<TaskRecord> {
    this.#check()
    let t = this.tasks.get(key)
    if (t && t.state !== 'erred') {
      t.refs++
      return t
    }
    t = new TaskRecord(key, undefined, bytes.length)
    t.scattered = true
    t.format = format
    t.group = 'scatter'
    t.seq = ++this.#seq
    t.restrict = options.workers?.length ? new Set(options.workers) : undefined
    const unmet = this.#restrictions.unmet(t)
    if (unmet) throw unmet
    t.preferred = scatterTarget(this, this.workers.values(), t)
    t.refs++
    this.tasks.set(key, t)
    this.totalTasks++
    await this.backup!.set(key, bytes)
    this.requeue(t, false)
    this.pump()
    return t
  }

  waitFor = (keys: string[]): Promise<void> => Promise.all(keys.map((k) => this.record(k).whenInMemory())).then(() => {})

  record(key: string): TaskRecord {
    const t = this.tasks.get(key)
    if (!t) throw new SpillwayError('ERR_SPILLWAY_UNKNOWN_KEY', `key ${JSON.stringify(key)} is not held by the cluster (released or never submitted)`, { key })
    return t
  }

  /** Puts a task where it can run: queued when its inputs are held, else waiting (and its freed inputs made again). */
  requeue(t: TaskRecord, front: boolean): void {
    if (this.#closed) return this.fail(t, new ClusterClosedError()) // handed back by workers stopping after close()
    t.worker = undefined
    for (const d of t.deps) if (d.state === 'released') this.requeue(d, false)
    if (t.deps.every((d) => d.state === 'memory')) {
      t.state = 'queued'
      if (front) this.queue.pushFront(t)
      else this.queue.push(t)
    } else t.state = 'waiting'
  }

  pump(): void {
    const q = this.queue
    let i = 0
    let scanned = 0
    // Tasks whose preferred worker is busy stay queued; the scan is bounded
    // so a long queue costs little per call.
    while (i < q.length && scanned < 256 && !this.#closed) {
      const t = q.at(i)
      if (t.state !== 'queued' || this.tasks.get(t.key) !== t) {
        q.removeAt(i)
        continue
      }
      if (!t.deps.every((d) => d.state === 'memory')) {
        q.removeAt(i)
        this.requeue(t, false)
        continue
      }
      const choice = pickWorker(this.workers.values(), t)
      if (choice === 'none') {
        // No worker can take anything: where that is because they are stuck, the queue fails rather than waits.
        for (const w of this.workers.values()) {
          if (!w.stuck) continue
          settleStuckWork(this)
          break
        }
        return
      }
      if (choice === 'later') {
        i++
        scanned++
        continue
      }
      q.removeAt(i)
      this.#run(t, choice)
    }
  }

  #run(t: TaskRecord, w: WorkerHandle): void {
    t.state = 'processing'
    t.worker = w
    t.stolenFrom = undefined
    const run = ++t.runs
    w.processing.add(t)
    w.inflight++
    this.#life.flush(w)
    const request = t.scattered
      ? this.backup!.get(t.key).then((data) => w.rpc.request<RunResult>({ op: 'put', key: t.key, data }))
      : w.rpc.request<RunResult>((t.sent = runRequest(t, w, this)))
    this.#sent.set(t, request)
    request
      .then(
        (res) => {
          if (!w.alive) return
          if (t.worker !== w || t.state !== 'processing' || t.runs !== run) {
            // Released while running: the worker stored the value after (or
            // without) seeing the release, so nothing would ever free it. A
            // skipped run stored nothing (and freeing would count as a stuck
            // worker's progress).
            if (!res.skipped) this.#life.discard(t.key, w)
            return
          }
          w.processing.delete(t)
          if (res.skipped) return this.requeue(t, true)
          t.state = 'memory'
          t.nbytes = res.nbytes
          if (res.format) t.format = res.format
          w.held.add(t)
          w.heldBytes += res.nbytes
          if (res.metrics) this.onHeartbeat(w, res.metrics)
          t.settle()
          this.#landed(t)
        },
        (err) => {
          // A lost worker is handled by removeWorker; anything else is the
          // task's own failure.
          if (err instanceof WorkerLostError || !w.alive || t.worker !== w || t.state !== 'processing' || t.runs !== run) return
          w.processing.delete(t)
          if (err?.code === 'ERR_SPILLWAY_MISSING_DEP') return missingInputs(this, t, err.details?.missing ?? [], err.details?.peer)
          if (t.retries > 0 && err?.code === 'ERR_SPILLWAY_TASK') {
            t.retries--
            return this.requeue(t, true)
          }
          this.fail(t, err)
        },
      )
      .finally(() => {
        w.inflight--
        w.lastDone = Date.now()
        this.pump()
      })
  }

  /** A value landed: dependents whose inputs are all held can run, inputs no one needs are freed. */
  #landed(t: TaskRecord): void {
    for (const d of t.dependents) {
      if (d.state === 'waiting' && d.deps.every((x) => x.state === 'memory')) this.requeue(d, false)
    }
    for (const dep of t.deps) if (!dep.needed) this.#life.forgetOrRelease(dep)
  }

  /** Takes a run back from a worker, which skips it, and queues it again (stuck-work.ts). */
  withdraw(t: TaskRecord, w: WorkerHandle): void {
    if (t.worker !== w || t.state !== 'processing') return
    w.processing.delete(t)
    w.rpc.request({ op: 'cancel', key: t.key }).catch(() => {})
    this.requeue(t, true)
  }

  /** Fails a task and, with the same error, every dependent still to run. */
  fail(t: TaskRecord, error: Error): void {
    if (t.worker && t.state === 'processing') t.worker.processing.delete(t)
    t.worker = undefined
    t.state = 'erred'
    t.error = error
    t.settle()
    for (const d of t.dependents) if (live(d.state)) this.fail(d, error)
    for (const dep of t.deps) if (!dep.needed) this.#life.forgetOrRelease(dep)
    if (t.refs === 0 && t.dependents.size === 0) this.#life.forget(t)
  }

  /** Cancels keys: queued work dropped, running work aborted, dependents failed with ERR_SPILLWAY_CANCELLED. `because` ends its message. */
  cancel(keys: string[], because = ''): void {
    for (const k of keys) {
      const t = this.tasks.get(k)
      if (!t || t.state === 'erred') continue
      const err = new SpillwayError('ERR_SPILLWAY_CANCELLED', `task ${JSON.stringify(k)} was cancelled${because}`, { key: k })
      this.#life.dropValue(t, CANCEL_GRACE_MS)
      this.fail(t, err)
    }
    this.pump()
  }

  /** client.restart(): every task cancelled, failed ones too, and forgotten (restart-tasks.ts). */
  cancelAndForgetAll = (because: string): void => cancelAndForgetAll(this, because, (t) => this.#life.forget(t))

  /** Reduces each key where it lives, in batches per worker, recomputing the chunks of lost workers and those a worker cannot read back; `onReduced` hears keys whose partial is in. */
  reduce(keys: string[], dtype: string, op: string, concurrency = 8, onReduced?: (keys: string[]) => void): Promise<ReducePartial[]> {
    return reduceWhereHeld(this, keys, dtype, op, concurrency, onReduced)
  }

  /** Drops a value its worker cannot hand back and makes it again (peer-gone.ts). */
  recompute = (t: TaskRecord, w: WorkerHandle): void => recomputeValue(this, t, w)

  /** Moves the workers' values to the others, then stops them (retire.ts). */
  retireWorkers = (workers: WorkerHandle[], options?: RetireOptions): Promise<RetireReport[]> => retireWorkers(this, workers, options)
  retireAsked = (w: WorkerHandle, reason: string): void => retireAsked(this, w, reason)

  /** Frees `key`'s copy on `w` alone (a moved or surplus copy); the value lives on elsewhere. */
  releaseCopy = (w: WorkerHandle, key: string): void => this.#life.releaseOn(w, key)
  flushReleases = (w: WorkerHandle): void => this.#life.flush(w)

  /** Lets go of one hold on each key; a value no one needs any more is freed. `aborted`: the holder's call was aborted, so a run this stops gets a cancel's grace (CANCEL_GRACE_MS) before its worker is restarted. */
  release(keys: string[], aborted = false): void {
    this.#life.release(keys, aborted ? CANCEL_GRACE_MS : undefined)
    this.pump()
  }

  /** Applies new thresholds on every live worker at once. */
  async setThresholds(t: Partial<Thresholds>): Promise<void> {
    this.thresholds = { ...this.thresholds, ...t }
    await askAll(this.workers.values(), { op: 'set-thresholds', thresholds: t }, (w, m) => this.onHeartbeat(w, m), true, { ms: RESPONSE_TIMEOUT_MS, slow: this.#slow })
  }

  /** Fresh metrics from every worker (the last heartbeat of one lost, or too slow to answer: marked unresponsive). */
  async refreshMetrics(): Promise<void> {
    await askAll(this.workers.values(), { op: 'metrics' }, (w, m) => this.onHeartbeat(w, m), false, { ms: RESPONSE_TIMEOUT_MS, slow: this.#slow })
  }

  close(): void {
    this.#closed = true
    this.#stopStealing()
    const err = new SpillwayError('ERR_SPILLWAY_CLOSED', 'the cluster was closed')
    for (const t of this.tasks.values()) {
      if (live(t.state)) {
        t.state = 'erred'
        t.error = err
        t.settle()
      }
    }
    this.queue.clear()
    this.#restrictions.close()
  }
}
