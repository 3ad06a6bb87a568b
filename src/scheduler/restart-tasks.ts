// What client.restart() does to the task graph, as Dask's restart: every
// task is cancelled, a failed one too, and forgotten, so the scheduler
// starts with no tasks (and whoHas() names none). The records themselves
// stay with their Futures, which read cancelled for good: a key submitted
// after the restart is a new record, another generation, that neither
// their status nor their release touches.

import { SpillwayError } from '../base/errors'
import type { TaskRecord } from './state'

export interface RestartHost {
  readonly tasks: Map<string, TaskRecord>
  cancel(keys: string[], because: string): void
}

export function cancelAndForgetAll(host: RestartHost, because: string, forget: (t: TaskRecord) => void): void {
  host.cancel([...host.tasks.keys()], because)
  for (const t of [...host.tasks.values()]) {
    // Failed before the restart: its Futures read cancelled, as every other's (Dask cancels them all).
    if ((t.error as SpillwayError | undefined)?.code !== 'ERR_SPILLWAY_CANCELLED') t.error = new SpillwayError('ERR_SPILLWAY_CANCELLED', `task ${JSON.stringify(t.key)} was cancelled${because}`, { key: t.key })
    forget(t)
  }
}
