// Prometheus text exposition (format 0.0.4) of the cluster view, so a
// site's Prometheus/Grafana can scrape the scheduler like Dask's /metrics.

import type { ClusterView, WorkerRow } from './state'

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

type Labels = Record<string, string>

/** Label values escape backslash, double quote and newline, as the format requires. */
export function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/**
 * Every figure here is a size, a count, a duration or a fraction: one that
 * is not finite or is negative came from a broken peer or a bug, and a
 * scraper would store it as data. Such samples are left out.
 */
function printable(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0
}

class Exposition {
  readonly #lines: string[] = []

  family(name: string, type: 'gauge' | 'counter', help: string, samples: [Labels, number][]): void {
    this.#lines.push(`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${name} ${type}`)
    for (const [labels, value] of samples) {
      if (!printable(value)) continue
      const l = Object.entries(labels)
        .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
        .join(',')
      this.#lines.push(`${name}${l ? `{${l}}` : ''} ${value}`)
    }
  }

  toString(): string {
    return this.#lines.join('\n') + '\n'
  }
}

/** Rows of live workers only: a slot being restarted has no worker to label. */
function live(view: ClusterView): (WorkerRow & { address: string })[] {
  return view.workers.filter((r): r is WorkerRow & { address: string } => r.address !== null)
}

export function renderMetrics(view: ClusterView): string {
  const e = new Exposition()
  const ws = live(view)
  const per = (get: (r: WorkerRow) => number): [Labels, number][] => ws.map((r) => [{ worker: r.address }, get(r)])

  e.family('spillway_workers', 'gauge', 'Live workers known to the scheduler.', [[{}, view.totals.workers]])
  e.family(
    'spillway_worker_status',
    'gauge',
    'Worker slot status (1 for the current status).',
    view.workers.map((r) => [{ slot: r.slot === null ? '' : String(r.slot), worker: r.address ?? '', status: r.status }, 1]),
  )
  e.family(
    'spillway_worker_stuck',
    'gauge',
    'Workers that are stuck (paused, unable to spill, no progress), by reason: spill-full, spill-failing, nothing-to-spill.',
    ws.filter((r) => r.stuck).map((r): [Labels, number] => [{ worker: r.address, reason: r.stuck!.reason }, 1]),
  )
  e.family(
    'spillway_worker_memory_bytes',
    'gauge',
    'Worker memory by type: managed (chunks in memory), spilled (chunks on disk, after compression), unmanaged (process memory minus managed in memory).',
    ws.flatMap((r): [Labels, number][] => [
      [{ worker: r.address, type: 'managed' }, r.inMemoryBytes],
      [{ worker: r.address, type: 'spilled' }, r.spilledBytes.disk],
      [{ worker: r.address, type: 'unmanaged' }, r.unmanagedBytes],
    ]),
  )
  e.family('spillway_worker_managed_bytes', 'gauge', 'Every chunk a worker holds, in memory or spilled, at its in-memory size.', per((r) => r.managedBytes))
  e.family('spillway_worker_spilled_memory_bytes', 'gauge', 'In-memory size of the chunks a worker has spilled.', per((r) => r.spilledBytes.memory))
  e.family('spillway_worker_rss_bytes', 'gauge', 'Resident memory of the worker process.', per((r) => r.rss))
  e.family('spillway_worker_memory_limit_bytes', 'gauge', 'Memory limit of the worker.', per((r) => r.memoryLimit))
  e.family(
    'spillway_worker_memory_threshold_ratio',
    'gauge',
    'Memory thresholds as fractions of the worker limit (an off one, target or spill false, has no sample).',
    ws.flatMap((r) => (['target', 'spill', 'pause', 'terminate'] as const).flatMap((k): [Labels, number][] => (r.thresholds[k] === false ? [] : [[{ worker: r.address, threshold: k }, r.thresholds[k]]]))),
  )
  e.family('spillway_worker_threads', 'gauge', 'Threads of the worker.', per((r) => r.nthreads))
  e.family('spillway_worker_tasks', 'gauge', 'Chunks the scheduler has placed on the worker, by state.', ws.flatMap((r): [Labels, number][] => [
    [{ worker: r.address, state: 'memory' }, r.tasks.held],
    [{ worker: r.address, state: 'processing' }, r.tasks.processing],
  ]))
  e.family('spillway_worker_spill_bytes_total', 'counter', 'Bytes written to spill files by the worker, after compression.', per((r) => r.spillBytesWritten))
  e.family('spillway_worker_transfer_incoming_bytes_total', 'counter', 'Bytes the worker fetched from other workers as task inputs.', per((r) => r.transfer.incomingBytes))
  e.family('spillway_worker_transfer_outgoing_bytes_total', 'counter', 'Bytes the worker sent to other workers and to the client.', per((r) => r.transfer.outgoingBytes))
  e.family('spillway_worker_shuffle_sent_bytes_total', 'counter', 'P2P shuffle shard bytes the worker pushed to the owners of their outputs.', per((r) => r.shuffle.sentBytes))
  e.family('spillway_worker_shuffle_received_bytes_total', 'counter', 'P2P shuffle shard bytes the worker took in for the outputs it owns.', per((r) => r.shuffle.receivedBytes))
  e.family('spillway_worker_shuffle_shards', 'gauge', 'P2P shuffle shards the worker holds now (in memory or spilled).', per((r) => r.shuffle.heldShards))
  e.family('spillway_worker_spill_count_total', 'counter', 'Chunks the worker has spilled to disk.', per((r) => r.spillCount))
  e.family('spillway_worker_spill_seconds_total', 'counter', 'Seconds the worker has spent spilling (compress and write).', per((r) => r.spillSeconds))
  e.family('spillway_worker_unspill_count_total', 'counter', 'Chunks the worker has read back from disk.', per((r) => r.unspillCount))
  e.family('spillway_worker_unspill_seconds_total', 'counter', 'Seconds the worker has spent reading spilled chunks back.', per((r) => r.unspillSeconds))
  e.family(
    'spillway_nanny_restarts_total',
    'counter',
    'Worker restarts by the nanny of each slot.',
    view.workers.filter((r) => r.slot !== null).map((r) => [{ slot: String(r.slot) }, r.restarts]),
  )
  e.family(
    'spillway_nanny_kills_total',
    'counter',
    'Workers the nanny of each slot killed at the terminate threshold.',
    view.workers.filter((r) => r.slot !== null).map((r) => [{ slot: String(r.slot) }, r.kills]),
  )

  e.family('spillway_cluster_memory_bytes', 'gauge', 'Managed bytes in memory over all workers.', [[{}, view.totals.memoryBytes]])
  e.family('spillway_cluster_spill_bytes', 'gauge', 'Spilled bytes on disk over all workers, after compression.', [[{}, view.totals.spillBytes]])
  e.family('spillway_cluster_peak_memory_bytes', 'gauge', 'Highest managed bytes in memory the scheduler has seen.', [[{}, view.peakMemoryBytes]])
  e.family('spillway_cluster_peak_spill_bytes', 'gauge', 'Highest spilled bytes on disk the scheduler has seen.', [[{}, view.peakSpillBytes]])
  e.family('spillway_lost_workers_total', 'counter', 'Workers the scheduler has lost.', [[{}, view.lostWorkers]])
  e.family(
    'spillway_tasks',
    'gauge',
    'Tasks the scheduler tracks, by state.',
    (['queued', 'processing', 'memory', 'erred'] as const).map((k): [Labels, number] => [{ state: k }, view.tasks.byState[k]]),
  )
  e.family('spillway_tasks_submitted_total', 'counter', 'Tasks submitted to the scheduler.', [[{}, view.tasks.submitted]])
  return e.toString()
}
