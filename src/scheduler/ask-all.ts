// One request to every live worker at once, each answering with its fresh
// metrics (threshold changes, metric refreshes).

import type { Request, WorkerMetrics } from '../wire/protocol'
import { WorkerLostError } from '../comm/rpc'
import type { WorkerHandle } from './state'

/**
 * `strict`: any failure but a lost worker rejects; otherwise failures leave
 * the last heartbeat in place. With `timeout`, a worker that has not
 * answered within `ms` is passed to `slow` and not waited for (its answer,
 * should it come, still lands).
 */
export async function askAll(
  workers: Iterable<WorkerHandle>,
  request: Request,
  onMetrics: (w: WorkerHandle, m: WorkerMetrics) => void,
  strict: boolean,
  timeout?: { ms: number; slow(w: WorkerHandle): void },
): Promise<void> {
  const bounded = (w: WorkerHandle, p: Promise<{ metrics: WorkerMetrics }>): Promise<unknown> => {
    if (!timeout) return p.then((r) => onMetrics(w, r.metrics))
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<void>((resolve) => (timer = setTimeout(() => resolve(timeout.slow(w)), timeout.ms)))
    return Promise.race([p.then((r) => onMetrics(w, r.metrics)), late]).finally(() => clearTimeout(timer))
  }
  await Promise.all(
    [...workers].map((w) =>
      bounded(w, w.rpc.request<{ metrics: WorkerMetrics }>(request))
        .catch((e) => {
          if (strict && !(e instanceof WorkerLostError)) throw e
        }),
    ),
  )
}
