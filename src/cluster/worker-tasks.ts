// What a worker can run. A task names its function; the built-in chunk
// tasks are native, and user tasks (module exports) will register here too.

import type { SpillBuffer } from '../spill-buffer'
import type { TaskFn } from './protocol'

type Runner = (buffer: SpillBuffer, key: string, task: TaskFn) => Promise<number>

export const RUNNERS: Record<TaskFn['fn'], Runner> = {
  chunk: (buffer, key, task) => buffer.generate(key, task.spec),
}
