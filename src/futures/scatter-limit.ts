// How large a scattered value may be. It goes to one worker in one message
// and must fit in that worker's memory limit; and a local worker's channel
// (Node's advanced IPC serialization) cannot carry a message of 2 GiB or
// more: the send succeeds but the worker fails to read it back.

import { SpillwayError } from '../base/errors'
import type { WorkerHandle } from '../scheduler/state'

/** The largest value one message to a worker carries whole. */
export const SCATTER_LIMIT_BYTES = 2 ** 31 - 2 ** 20

const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB`

/** The error for a value no worker it may go to can take, or undefined. */
export function scatterTooLarge(bytes: number, workers: Iterable<WorkerHandle>, restrict?: string[]): SpillwayError | undefined {
  let largest = 0
  for (const w of workers) {
    if (restrict?.length && !restrict.includes(w.address) && !restrict.includes(w.name)) continue
    largest = Math.max(largest, w.memoryLimit)
  }
  // No worker yet (they join from elsewhere later): only the message's own bound applies.
  const limit = largest > 0 ? Math.min(largest, SCATTER_LIMIT_BYTES) : SCATTER_LIMIT_BYTES
  if (bytes <= limit) return undefined
  const why = largest > 0 && largest <= SCATTER_LIMIT_BYTES ? `the largest worker memory limit (${gib(largest)})` : `the most one message to a worker carries (${gib(SCATTER_LIMIT_BYTES)})`
  return new SpillwayError(
    'ERR_SPILLWAY_TOO_LARGE',
    `cannot scatter a value of ${bytes} bytes (${gib(bytes)}): it is larger than ${why}; split it into smaller values (scatter each part) or give the workers more memory`,
    { bytes, limitBytes: limit, workerMemoryLimit: largest || undefined },
  )
}
