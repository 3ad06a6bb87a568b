// The tasks a bag's partitions read, made only when the bag runs, with
// their number known beforehand: the client refuses a graph past
// maxGraphTasks without making a task of it.

import type { TaskSubmission } from '../scheduler/scheduler'

/** Makes the upstream tasks; `count` says how many it will make (keys shared by several sides counted each time). */
export interface Upstream {
  (): TaskSubmission[]
  readonly count: number
}

export function upstreamOf(make: () => TaskSubmission[], count: number): Upstream {
  return Object.assign(() => make(), { count })
}

export const NO_UPSTREAM: Upstream = upstreamOf(() => [], 0)

/** Tasks of a reduction tree over `n` partials, `splitEvery` a task, as treeTasks makes them. */
export function treeTaskCount(n: number, splitEvery: number): number {
  if (n === 0) return 1
  let count = 0
  let level = n
  do {
    level = Math.ceil(level / splitEvery)
    count += level
  } while (level > 1)
  return count
}
