// Dask's retry: an erred task (a thrown error, a cancel) submitted again
// under its key, with every erred task it takes as an input, inputs first.
// The new record takes over the old one's holds, so the Futures of the key
// read the new run and their releases still balance.

import { ArgumentError } from '../base/errors'
import type { Scheduler } from '../scheduler/scheduler'
import type { TaskRecord } from '../scheduler/state'

/** The erred records behind `keys`, inputs before the tasks that take them. */
function erredClosure(scheduler: Scheduler, keys: string[]): TaskRecord[] {
  const order: TaskRecord[] = []
  const seen = new Set<TaskRecord>()
  const visit = (t: TaskRecord) => {
    if (seen.has(t) || t.state !== 'erred') return
    seen.add(t)
    if (!t.task) {
      throw new ArgumentError([{ field: 'futures', value: t.key, allowed: 'Futures of tasks (a scattered value has no task to run again: scatter it again)' }], 'retry arguments')
    }
    // An input retried on its own earlier has a new record under its key.
    for (const d of t.deps) visit(scheduler.tasks.get(d.key) ?? d)
    order.push(t)
  }
  for (const k of keys) visit(scheduler.record(k))
  return order
}

/** Runs the erred tasks of `keys` again; keys that did not fail are left as they are. */
export function retryErred(scheduler: Scheduler, keys: string[]): void {
  for (const old of erredClosure(scheduler, keys)) {
    const [fresh] = scheduler.submit([
      {
        key: old.key,
        task: old.task!,
        expectedBytes: old.expectedBytes,
        deps: [...new Set(old.deps.map((d) => d.key))],
        format: old.format,
        group: old.group,
        priority: old.priority,
        workers: old.restrict && [...old.restrict],
      },
    ])
    // submit held it once for us; the old record's holders (Futures, or none for an input) hold it instead.
    fresh.refs += old.refs - 1
    old.successor = fresh
  }
}
