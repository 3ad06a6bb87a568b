// A task that would wait on itself through what it submits (getClient() in
// a task). Submitting its own key, or the key of a task that waits on it
// through its sub-tasks (a child submitting under its parent's key), finds
// that key already running: the sub-task's Future would wait on the very
// run that waits on it, for ever and without a word. Found by walking up
// from the submitting task through the runs holding each key.

import { SpillwayError } from '../base/errors'

/**
 * The chain from `submitted` down to `parent` (`submitted` first), when
 * `submitted` is `parent` or one of the tasks that submitted it, directly
 * or through others; undefined when submitting it closes no cycle.
 * `submittersOf(k)`: the keys of the running tasks that hold `k`.
 */
export function cycleThrough(parent: string, submitted: string, submittersOf: (key: string) => Iterable<string>): string[] | undefined {
  // Breadth first, so the chain named is a shortest one.
  const below = new Map<string, string | undefined>([[parent, undefined]])
  const queue = [parent]
  for (let i = 0; i < queue.length; i++) {
    const k = queue[i]
    if (k === submitted) {
      const chain = [k]
      for (let c = below.get(k); c !== undefined; c = below.get(c)) chain.push(c)
      return chain
    }
    for (const up of submittersOf(k)) {
      if (below.has(up)) continue
      below.set(up, k)
      queue.push(up)
    }
  }
  return undefined
}

export function cycleError(parent: string, submitted: string, chain: string[]): SpillwayError {
  const what = chain.length === 1 ? 'its own key' : `the key of a task that waits on it through its sub-tasks (${chain.map((k) => JSON.stringify(k)).join(' → ')})`
  return new SpillwayError(
    'ERR_SPILLWAY_CYCLE',
    `task ${JSON.stringify(parent)} submitted ${JSON.stringify(submitted)}, which is ${what}: it would wait on itself for ever. Submit it under another key (other arguments, pure: false, or a key of its own)`,
    { key: submitted, parent, chain },
  )
}
