// The scheduler's side of tasks that submit tasks (getClient() in a task):
// each run on a worker submits sub-tasks and holds them like a client's
// Futures, waits for keys and learns where their values live (values never
// come here: the task fetches them from their holders), and lets them go.
// Everything a run holds is let go of when its worker says the run is done,
// or when that worker is lost, so a dead task leaks nothing. A run that
// waits on its sub-tasks has given its slot back (seceded): its worker may
// take more work meanwhile, or a task waiting on its own sub-tasks would
// deadlock a worker of one thread. A sub-task that would wait on the task
// that submits it (its own key, an ancestor's) is refused (sub-task-cycles.ts).

import { SpillwayError } from '../base/errors'
import { errorPayload } from '../comm/rpc'
import type { KeyOutcome, SubTask, TaskCall } from '../wire/protocol'
import type { Scheduler } from './scheduler'
import { releasedError, type TaskRecord, type WorkerHandle } from './state'
import { cycleError, cycleThrough } from './sub-task-cycles'

interface Run {
  /** Holds per key: one per Future the task has of it. */
  holds: Map<string, number>
  /**
   * The record each key's holds were taken on. A key submitted anew (after
   * it failed or was cancelled) is another record: holds on the old one are
   * not the new one's to let go of, or a release would free someone else's value.
   */
  records: Map<string, TaskRecord>
  seceded: boolean
  /** The key of the task it runs, as its worker said with its first submit. */
  key: string | undefined
}

function unknownKey(key: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_UNKNOWN_KEY', `key ${JSON.stringify(key)} is not held by the cluster (released or never submitted)`, { key })
}

export class TaskClients {
  readonly #runs = new Map<WorkerHandle, Map<string, Run>>()
  /** The runs holding each key: who waits on a key, for the cycle check. */
  readonly #heldBy = new Map<string, Set<Run>>()

  constructor(private readonly scheduler: Scheduler) {
    scheduler.on('worker-added', (w: WorkerHandle) => w.rpc.answerCalls((c) => this.answer(w, c)))
    scheduler.on('worker-removed', (w: WorkerHandle) => this.#dropWorker(w))
  }

  async answer(w: WorkerHandle, call: TaskCall): Promise<unknown> {
    if (!w.alive) throw new SpillwayError('ERR_SPILLWAY_WORKER_LOST', `worker ${w.address} was lost`, { address: w.address })
    switch (call.op) {
      case 'submit':
        this.#submit(this.#run(w, call.run, true)!, call.tasks, call.parent)
        return {}
      case 'wait': {
        const run = this.#run(w, call.run)
        return Promise.all(call.keys.map((k) => this.#outcome(k, run)))
      }
      case 'release':
        this.#release(this.#run(w, call.run), call.keys)
        return {}
      case 'cancel':
        return { released: this.#cancel(this.#run(w, call.run), call.keys) }
      case 'secede':
      case 'rejoin':
        this.#secede(w, this.#run(w, call.run, call.op === 'secede'), call.op === 'secede')
        return {}
      case 'done':
        this.#done(w, call.run)
        return {}
    }
  }

  /** Runs of a worker that hold something or have seceded (for tests and the dashboard). */
  runsOn(w: WorkerHandle): number {
    return this.#runs.get(w)?.size ?? 0
  }

  #run(w: WorkerHandle, name: string, create = false): Run | undefined {
    let runs = this.#runs.get(w)
    if (!runs) {
      if (!create) return undefined
      this.#runs.set(w, (runs = new Map()))
    }
    let r = runs.get(name)
    if (!r && create) runs.set(name, (r = { holds: new Map(), records: new Map(), seceded: false, key: undefined }))
    return r
  }

  #submit(run: Run, tasks: SubTask[], parent: string | undefined): void {
    run.key ??= parent
    // Checked whole before any is added: a submit that fails part way would leave holds no one counts.
    const batch = new Set<string>()
    for (const s of tasks) {
      const chain = run.key === undefined ? undefined : cycleThrough(run.key, s.key, this.#submitters)
      if (chain) throw cycleError(run.key!, s.key, chain)
      for (const d of s.deps) if (!batch.has(d) && !this.scheduler.tasks.has(d)) throw unknownKey(d)
      const deps = new Set(s.deps)
      // An input the run would never be given would fail it, and rerun it, for ever.
      for (const ref of s.task.deps) if (!deps.has(ref.key)) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `sub-task ${JSON.stringify(s.key)} takes ${JSON.stringify(ref.key)} without listing it in its deps`, { key: s.key })
      batch.add(s.key)
    }
    const records = this.scheduler.submit(tasks.map((s) => ({ ...s, expectedBytes: 1 })))
    for (const t of records) {
      const same = run.records.get(t.key) === t
      run.records.set(t.key, t)
      run.holds.set(t.key, (same ? (run.holds.get(t.key) ?? 0) : 0) + 1)
      let by = this.#heldBy.get(t.key)
      if (!by) this.#heldBy.set(t.key, (by = new Set()))
      by.add(run)
    }
  }

  /** The keys of the running tasks that hold `key` (on its current record). */
  #submitters = (key: string): string[] => {
    const out: string[] = []
    for (const r of this.#heldBy.get(key) ?? []) if (r.key !== undefined && this.#current(r, key)) out.push(r.key)
    return out
  }

  #unhold(run: Run, key: string): void {
    run.holds.delete(key)
    const by = this.#heldBy.get(key)
    if (!by) return
    by.delete(run)
    if (by.size === 0) this.#heldBy.delete(key)
  }

  async #outcome(key: string, run?: Run): Promise<KeyOutcome> {
    // A run waiting on itself, or on a task that waits on it, would wait for ever.
    const chain = run?.key === undefined ? undefined : cycleThrough(run.key, key, this.#submitters)
    if (chain) return { key, state: 'erred', error: errorPayload(cycleError(run!.key!, key, chain)) }
    const t = this.scheduler.tasks.get(key)
    if (!t) return { key, state: 'erred', error: errorPayload(unknownKey(key)) }
    await t.whenDone()
    if (t.state === 'memory' && t.worker) return { key, state: 'memory', format: t.format, nbytes: t.nbytes, address: t.worker.dataAddress }
    return { key, state: 'erred', error: errorPayload(t.error ?? releasedError(key)) }
  }

  #release(run: Run | undefined, keys: string[]): void {
    const out: string[] = []
    for (const k of keys) {
      const n = run?.holds.get(k) ?? 0
      // Only what the run holds: a worker cannot let go of another client's keys.
      if (n === 0) continue
      if (n === 1) this.#unhold(run!, k)
      else run!.holds.set(k, n - 1)
      if (this.#current(run!, k)) out.push(k)
    }
    if (out.length && !this.scheduler.closed) this.scheduler.release(out)
  }

  /**
   * Cancels keys the run holds. One that others hold too is only let go of
   * by this run (returned: its Futures there read cancelled), as a client's
   * cancel is.
   */
  #cancel(run: Run | undefined, keys: string[]): string[] {
    const everywhere: string[] = []
    const released: string[] = []
    for (const k of keys) {
      const n = run?.holds.get(k) ?? 0
      const t = this.scheduler.tasks.get(k)
      if (n === 0 || !t) continue
      if (!this.#current(run!, k)) {
        this.#unhold(run!, k)
        continue
      }
      if (t.refs <= n || t.state === 'erred') everywhere.push(k)
      else {
        this.#unhold(run!, k)
        released.push(k)
        this.scheduler.release(new Array<string>(n).fill(k))
      }
    }
    if (everywhere.length && !this.scheduler.closed) this.scheduler.cancel(everywhere)
    return released
  }

  #secede(w: WorkerHandle, run: Run | undefined, secede: boolean): void {
    if (!run || run.seceded === secede) return
    run.seceded = secede
    w.seceded += secede ? 1 : -1
    if (secede) this.scheduler.pump()
  }

  #done(w: WorkerHandle, name: string): void {
    const runs = this.#runs.get(w)
    const run = runs?.get(name)
    if (!run) return
    runs!.delete(name)
    if (runs!.size === 0) this.#runs.delete(w)
    this.#secede(w, run, false)
    this.#letGo(run)
  }

  #letGo(run: Run): void {
    const keys: string[] = []
    for (const [k, n] of run.holds) {
      if (this.#current(run, k)) for (let i = 0; i < n; i++) keys.push(k)
      this.#unhold(run, k)
    }
    run.records.clear()
    if (keys.length && !this.scheduler.closed) this.scheduler.release(keys)
  }

  /** Whether the run's holds on `k` are on the record the scheduler has now. */
  #current(run: Run, k: string): boolean {
    return this.scheduler.tasks.get(k) === run.records.get(k)
  }

  /** A lost worker's runs are over: everything they held is let go of (their tasks run again elsewhere). */
  #dropWorker(w: WorkerHandle): void {
    const runs = this.#runs.get(w)
    if (!runs) return
    this.#runs.delete(w)
    for (const run of runs.values()) this.#letGo(run)
  }
}
