// A graph the client cannot hold is refused before a task of it is made.
// Each task costs the client and the scheduler about 4 KB of heap (its
// spec, its state, its dependents), so 9 million one-element chunks ran
// the client out of heap at 3 GB; the count comes from the chunk grids
// and the partitions alone.

import { SpillwayError } from '../base/errors'
import type { ChunkedArray } from '../array/array'

/** What is being refused, for the message: an array's grid, a bag's partitions. */
export interface GraphShape {
  /** Tasks the graph would make. */
  tasks: number
  /** The collection, in words: "array rechunk-… of shape [3000, 3000] in chunks [1, 1]". */
  what: string
  /** How to make it smaller, for this kind of collection. */
  advice: string
}

const fmt = (n: number) => n.toLocaleString('en-US')

export function checkGraphSize(shape: GraphShape, limit: number): void {
  if (shape.tasks <= limit) return
  throw new SpillwayError(
    'ERR_SPILLWAY_GRAPH_TOO_LARGE',
    `the ${shape.what} needs ${fmt(shape.tasks)} tasks, past this client's limit of ${fmt(limit)} (maxGraphTasks): ${shape.advice}, or raise maxGraphTasks in setupClient if the client can hold about 4 KB of heap a task`,
    { tasks: shape.tasks, maxGraphTasks: limit },
  )
}

/** An array's graph against the client's limit, counted from its chunk grid. */
export function checkArraySize(array: ChunkedArray, limit: number): void {
  const what = `array ${array.name} of shape [${array.shape.join(', ')}] in chunks [${array.chunks.join(', ')}]`
  checkGraphSize({ tasks: array.taskCount(), what, advice: 'use larger chunks (Dask advises chunks of about 100 MB)' }, limit)
}
