// One request to every live worker at once, each answering with its fresh
// metrics (threshold changes, metric refreshes).

import type { Request, WorkerMetrics } from '../wire/protocol'
import { WorkerLostError } from '../comm/rpc'
import type { WorkerHandle } from './state'

/** `strict`: any failure but a lost worker rejects; otherwise failures leave the last heartbeat in place. */
export async function askAll(workers: Iterable<WorkerHandle>, request: Request, onMetrics: (w: WorkerHandle, m: WorkerMetrics) => void, strict: boolean): Promise<void> {
  await Promise.all(
    [...workers].map((w) =>
      w.rpc
        .request<{ metrics: WorkerMetrics }>(request)
        .then((r) => onMetrics(w, r.metrics))
        .catch((e) => {
          if (strict && !(e instanceof WorkerLostError)) throw e
        }),
    ),
  )
}
