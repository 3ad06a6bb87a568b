// Request/reply over a transport, with every outstanding request failed at
// once when the channel closes: a dead worker must never leave a caller
// waiting.

import { isErrorCode, SpillwayError, WorkerStuckError } from '../base/errors'
import type { ErrorPayload, Request, SchedulerToWorker, TaskCall, WorkerToScheduler, WorkerMetrics } from '../wire/protocol'
import { checkTaskCall, checkWorkerMessage, type Asked } from '../wire/validate'
import type { Transport } from './transport'

export class WorkerLostError extends SpillwayError {
  constructor(address: string) {
    super('ERR_SPILLWAY_WORKER_LOST', `worker ${address} was lost`, { address })
    this.name = 'WorkerLostError'
  }
}

/**
 * A worker's failure as one of spillway's stable codes: a foreign code (a
 * system call's ENOENT, the binding's StringExpected) would become API by
 * leaking through, so it is kept in details only. A user task's own error
 * keeps its name, message and stack in `details.remote`, and its stack is
 * shown under the caller's.
 */
export function workerError(e: ErrorPayload): SpillwayError {
  const details: Record<string, unknown> = {}
  // A user's error is told apart by its own field, never by its code: a task
  // throwing { code: 'ERR_SPILLWAY_MISSING_DEP' } would otherwise be rerun forever.
  if (e.remote) {
    details.remote = e.remote
    // The task's own error, rebuilt as far as it crossed (name, message, stack), as the standard cause.
    const cause = Object.assign(new Error(e.remote.message), { name: e.remote.name, stack: e.remote.stack ?? `${e.remote.name}: ${e.remote.message}` })
    const err = new SpillwayError('ERR_SPILLWAY_TASK', e.message, details, { cause })
    if (e.remote.stack) err.stack = `${err.stack}\n  the task's own error, as thrown on the worker:\n${e.remote.stack}`
    return err
  }
  if (e.missing) details.missing = e.missing
  const ours = isErrorCode(e.code)
  if (!ours && e.code !== undefined) details.originalCode = e.code
  if (e.stuck && (e.code === 'ERR_SPILLWAY_SPILL_FULL' || e.code === 'ERR_SPILLWAY_WORKER_STUCK')) return new WorkerStuckError(e.code, e.message, e.stuck)
  return new SpillwayError(isErrorCode(e.code) ? e.code : 'ERR_SPILLWAY_TASK', e.message, details)
}

interface Pending extends Asked {
  resolve(v: unknown): void
  reject(e: unknown): void
}

export interface RpcHandlers {
  heartbeat(m: WorkerMetrics): void
  log(level: string, message: string): void
  closed(): void
  /** The worker asks to leave (its lifetime is up). */
  retire?(reason: string): void
  /** A message of the wrong shape arrived; the link is being closed. */
  invalid?(error: SpillwayError): void
}

/** Answers a running task's call (scheduler/task-clients.ts). */
export type CallHandler = (call: TaskCall) => Promise<unknown>

/** An error as it travels in a reply or an answer: one of our codes, a user task's own error kept whole. */
export function errorPayload(e: any): ErrorPayload {
  const out: ErrorPayload = { code: e?.code, message: String(e?.message ?? e) }
  if (e?.remote) out.remote = e.remote
  else if (e?.details?.remote) out.remote = e.details.remote
  if (e?.missing) out.missing = e.missing
  if (e instanceof WorkerStuckError) out.stuck = e.details
  return out
}

export class WorkerRpc {
  #next = 1
  #calls: CallHandler | undefined
  #pending = new Map<number, Pending>()
  #closed = false
  #broken = false

  constructor(
    private readonly address: string,
    private readonly transport: Transport<WorkerToScheduler, SchedulerToWorker>,
    handlers: RpcHandlers,
  ) {
    transport.onMessage((raw) => {
      if (this.#broken) return
      let msg: WorkerToScheduler
      try {
        msg = checkWorkerMessage(raw, (id) => this.#pending.get(id))
      } catch (e) {
        // A peer that sends one wrong message cannot be trusted with the
        // work it holds: it is dropped, and lost as a dead worker is.
        this.#broken = true
        handlers.invalid?.(e as SpillwayError)
        if (transport.destroy) transport.destroy()
        else transport.close()
        return
      }
      if (msg.kind === 'heartbeat') handlers.heartbeat(msg.metrics)
      else if (msg.kind === 'log') handlers.log(msg.level, msg.message)
      else if (msg.kind === 'retire') handlers.retire?.(msg.reason)
      else if (msg.kind === 'call') this.#answer(msg.id, msg.call)
      else if (msg.kind === 'reply') {
        const p = this.#pending.get(msg.id)
        if (!p) return
        this.#pending.delete(msg.id)
        if (msg.ok) p.resolve(msg.result)
        else p.reject(workerError(msg.error))
      }
    })
    transport.onClose(() => {
      this.#closed = true
      const err = new WorkerLostError(this.address)
      for (const p of this.#pending.values()) p.reject(err)
      this.#pending.clear()
      handlers.closed()
    })
  }

  /** Takes the worker's calls from here on (until then they are refused). */
  answerCalls(handler: CallHandler): void {
    this.#calls = handler
  }

  #answer(id: number, raw: unknown): void {
    const handler = this.#calls
    let work: Promise<unknown>
    try {
      // A malformed call fails that call only: it is the task's request, not the worker's state.
      const call = checkTaskCall(raw)
      if (!handler) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `worker ${this.address} made a call before it joined`)
      work = handler(call)
    } catch (e) {
      work = Promise.reject(e)
    }
    work.then(
      (result) => this.transport.send({ kind: 'answer', id, ok: true, result }),
      (e) => this.transport.send({ kind: 'answer', id, ok: false, error: errorPayload(e) }),
    )
  }

  get closed(): boolean {
    return this.#closed
  }

  request<T>(request: Request): Promise<T> {
    if (this.#closed || this.#broken) return Promise.reject(new WorkerLostError(this.address))
    const id = this.#next++
    return new Promise<T>((resolve, reject) => {
      const keys = request.op === 'reduce-many' ? request.keys.length : undefined
      this.#pending.set(id, { op: request.op, keys, resolve: resolve as (v: unknown) => void, reject })
      if (!this.transport.send({ kind: 'request', id, request })) {
        this.#pending.delete(id)
        reject(new WorkerLostError(this.address))
      }
    })
  }
}
