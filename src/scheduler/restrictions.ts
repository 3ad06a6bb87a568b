// Whether a restriction (`workers: [...]`) can still be met. A worker's
// name outlives its incarnation: its nanny starts a new process under the
// same name (with a new address), so for a while after a worker leaves its
// name counts as restarting. Work no live or restarting worker may take
// fails with a coded error rather than waiting for ever.

import { NoAllowedWorkerError } from '../base/errors'
import { allowed } from './placement'
import type { TaskRecord, WorkerHandle } from './state'

/**
 * How long a departed worker's name is expected back when no nanny says
 * otherwise (a remote nanny's restart, its backoff included, fits in it).
 */
export const RETURN_GRACE_MS = 30_000

/** What the restriction check needs of the scheduler. */
export interface RestrictionHost {
  readonly workers: Map<string, WorkerHandle>
  readonly tasks: Map<string, TaskRecord>
  fail(t: TaskRecord, error: Error): void
}

const waiting = (t: TaskRecord) => t.state === 'waiting' || t.state === 'queued'

export class Restrictions {
  readonly #returning = new Map<string, NodeJS.Timeout>()

  constructor(private readonly host: RestrictionHost) {}

  joined(w: WorkerHandle): void {
    clearTimeout(this.#returning.get(w.name))
    this.#returning.delete(w.name)
  }

  /** A worker left: its name may come back within `graceMs`. */
  left(w: WorkerHandle, graceMs = RETURN_GRACE_MS): void {
    clearTimeout(this.#returning.get(w.name))
    const timer = setTimeout(() => this.gone(w.name), graceMs)
    timer.unref()
    this.#returning.set(w.name, timer)
    this.check()
  }

  /** No worker of this name will come back (its nanny stopped): what only it could run fails. */
  gone(name: string): void {
    clearTimeout(this.#returning.get(name))
    if (this.#returning.delete(name)) this.check()
  }

  /** The error for a task whose restriction cannot be met, if it cannot. */
  unmet(t: TaskRecord): NoAllowedWorkerError | undefined {
    if (!t.restrict) return undefined
    for (const r of t.restrict) if (this.#returning.has(r)) return undefined
    const live: string[] = []
    for (const w of this.host.workers.values()) {
      if (w.alive && allowed(w, t)) return undefined
      live.push(w.name)
    }
    return new NoAllowedWorkerError(t.key, [...t.restrict], live)
  }

  /** Fails `t` if it is still to run and its restriction cannot be met. */
  failIfUnmet(t: TaskRecord): void {
    const e = t.restrict && waiting(t) ? this.unmet(t) : undefined
    if (e) this.host.fail(t, e)
  }

  /** Fails every task still to run whose restriction can no longer be met. */
  check(): void {
    const failing: [TaskRecord, Error][] = []
    for (const t of this.host.tasks.values()) {
      if (!t.restrict || !waiting(t)) continue
      const e = this.unmet(t)
      if (e) failing.push([t, e])
    }
    for (const [t, e] of failing) if (waiting(t)) this.host.fail(t, e)
  }

  close(): void {
    for (const timer of this.#returning.values()) clearTimeout(timer)
    this.#returning.clear()
  }
}
