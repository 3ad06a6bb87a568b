// The worker's own requests to the scheduler, on behalf of its running
// tasks (their getClient()), over the same link the scheduler's requests
// come by: numbered, each answered once; all fail at once when the link
// closes, so no task waits on a scheduler that is gone.

import { SpillwayError } from '../base/errors'
import { workerError } from '../comm/rpc'
import type { Transport } from '../comm/transport'
import type { SchedulerToWorker, TaskCall, WorkerToScheduler } from '../wire/protocol'

interface Pending {
  resolve(v: unknown): void
  reject(e: unknown): void
}

function linkClosed(): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_CLOSED', 'the link to the scheduler closed')
}

export class SchedulerCalls {
  #next = 1
  readonly #pending = new Map<number, Pending>()
  #closed = false

  constructor(private readonly transport: Transport<SchedulerToWorker, WorkerToScheduler>) {
    transport.onClose(() => {
      this.#closed = true
      for (const p of this.#pending.values()) p.reject(linkClosed())
      this.#pending.clear()
    })
  }

  call<T>(call: TaskCall): Promise<T> {
    if (this.#closed) return Promise.reject(linkClosed())
    const id = this.#next++
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
      if (!this.transport.send({ kind: 'call', id, call })) {
        this.#pending.delete(id)
        reject(linkClosed())
      }
    })
  }

  /** A call whose answer no one waits for (secede, rejoin, release): sent in order with the rest. */
  tell(call: TaskCall): void {
    this.call(call).catch(() => {})
  }

  answered(m: Extract<SchedulerToWorker, { kind: 'answer' }>): void {
    const p = this.#pending.get(m.id)
    if (!p) return
    this.#pending.delete(m.id)
    if (m.ok) p.resolve(m.result)
    else p.reject(workerError(m.error))
  }
}
