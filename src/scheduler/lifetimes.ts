// When a value is freed. A key is held by its Futures (and persisted
// arrays); once none hold it and no dependent still has to run, its value is
// freed on its worker, and the record itself is forgotten once no dependent
// refers to it (until then it stays, released, so it can be made again).
// Releases to a worker go out in one message a tick later (a gather of
// thousands of small values releases them all at once), and always before
// the next run sent there, so a release never deletes a rerun. A run no one
// wants any more is stopped on its worker (`stopRun`: scheduler.ts).

import type { ScatterBackup } from './scatter-backup'
import { releasedError, type TaskRecord } from './state'
import type { WorkerHandle } from './state'
import { releaseReplicas, type ReplicaHost } from './replicas'

export class Lifetimes implements ReplicaHost {
  readonly #releases = new Map<WorkerHandle, string[]>()
  /** The grace the runs stopped by the release under way get (an aborted call's: a cancel's), through every dependency it lets go of. */
  #releaseGrace: number | undefined

  constructor(
    private readonly tasks: Map<string, TaskRecord>,
    private readonly backup: () => ScatterBackup | undefined,
    /** Aborts a run no one wants; `graceMs`: how long it may take to stop (undefined: the released-task grace). */
    private readonly stopRun: (t: TaskRecord, w: WorkerHandle, graceMs?: number) => void = () => {},
  ) {}

  releaseCopy = (w: WorkerHandle, key: string): void => this.releaseOn(w, key)

  releaseOn(w: WorkerHandle, key: string): void {
    // Freeing values is progress: a stuck worker may take work again (it says so if it stays stuck).
    w.stuck = undefined
    const keys = this.#releases.get(w)
    if (keys) return void keys.push(key)
    this.#releases.set(w, [key])
    setImmediate(() => this.flush(w))
  }

  /** Sends the releases waiting for `w` now. */
  flush(w: WorkerHandle): void {
    const keys = this.#releases.get(w)
    if (!keys) return
    this.#releases.delete(w)
    if (w.alive) w.rpc.request({ op: 'release', keys }).catch(() => {})
  }

  /** Frees a value on its worker (or stops a run in flight, given `graceMs` to stop); the record stays. */
  dropValue(t: TaskRecord, graceMs: number | undefined = this.#releaseGrace): void {
    const w = t.worker
    if (!w) return
    if (t.state === 'memory') {
      w.held.delete(t)
      w.heldBytes -= t.nbytes
      this.releaseOn(w, t.key)
      releaseReplicas(this, t)
    } else if (t.state === 'processing') {
      // No longer counts towards the worker's load, nor is rerun if that
      // worker dies; its result is discarded when it lands.
      w.processing.delete(t)
      this.releaseOn(w, t.key)
      this.stopRun(t, w, graceMs)
    }
    t.worker = undefined
  }

  /** A value no one needs: forgotten if nothing refers to it, else freed and kept as released. */
  forgetOrRelease(t: TaskRecord): void {
    if (t.needed || this.tasks.get(t.key) !== t) return
    if (t.state === 'erred') {
      if (t.dependents.size === 0) this.forget(t)
      return
    }
    this.dropValue(t)
    if (t.state !== 'memory' && t.state !== 'released') {
      t.state = 'erred'
      t.error = t.waiters.size ? releasedError(t.key) : undefined
      t.settle()
    }
    t.state = 'released'
    if (t.dependents.size === 0) this.forget(t)
  }

  forget(t: TaskRecord): void {
    if (this.tasks.get(t.key) !== t) return
    this.dropValue(t)
    if (t.state !== 'memory' && t.state !== 'erred') {
      t.state = 'erred'
      if (t.waiters.size) t.error ??= releasedError(t.key)
      t.settle()
    }
    this.tasks.delete(t.key)
    if (t.scattered) this.backup()?.delete(t.key)
    for (const dep of t.deps) {
      dep.dependents.delete(t)
      if (!dep.needed) this.forgetOrRelease(dep)
    }
  }

  /**
   * Lets go of one hold on each key; a value no one needs any more is freed.
   * `graceMs`: how long a run this stops may take to stop (an aborted call
   * gives a cancel's; undefined: the released-task grace).
   */
  release(keys: string[], graceMs?: number): void {
    const outer = this.#releaseGrace
    this.#releaseGrace = graceMs ?? outer
    try {
      for (const k of keys) {
        const t = this.tasks.get(k)
        if (!t) continue
        t.refs = Math.max(0, t.refs - 1)
        if (t.refs === 0) this.forgetOrRelease(t)
      }
    } finally {
      this.#releaseGrace = outer
    }
  }

  /** Frees the value a run produced after its key was released, unless the key was submitted again and lives there now. */
  discard(key: string, w: WorkerHandle): void {
    const current = this.tasks.get(key)
    if (current?.worker === w && (current.state === 'processing' || current.state === 'memory')) return
    this.releaseOn(w, key)
  }
}
