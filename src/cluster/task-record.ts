// One task in the scheduler's graph. States follow Dask's: queued (waiting
// for a worker), processing (sent to one), memory (held by one), erred.

import type { TaskFn } from './protocol'
import type { WorkerHandle } from './worker-handle'

export type TaskState = 'queued' | 'processing' | 'memory' | 'erred'

export interface Waiter {
  resolve(): void
  reject(e: unknown): void
}

export class TaskRecord {
  state: TaskState = 'queued'
  worker: WorkerHandle | undefined
  nbytes = 0
  /** Workers that died while running this task (Dask's "suspicious"). */
  suspicious = 0
  lastWorker: string | undefined
  error: Error | undefined
  readonly waiters = new Set<Waiter>()

  constructor(
    readonly key: string,
    readonly task: TaskFn,
    readonly expectedBytes: number,
  ) {}

  settle() {
    for (const w of this.waiters) {
      if (this.state === 'memory') w.resolve()
      else if (this.state === 'erred') w.reject(this.error)
      else continue
      this.waiters.delete(w)
    }
  }

  whenInMemory(): Promise<void> {
    if (this.state === 'memory') return Promise.resolve()
    if (this.state === 'erred') return Promise.reject(this.error)
    return new Promise((resolve, reject) => this.waiters.add({ resolve, reject }))
  }
}
