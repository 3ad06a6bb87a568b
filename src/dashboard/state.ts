// What the dashboard shows, read from the scheduler and the nannies as they
// are now. One row per worker slot (a nanny), so a worker being restarted
// keeps its row; workers that joined without a nanny get rows of their own.

import { shuffleViews, type ShuffleView } from './shuffles'
import type { Client } from '../client/client'
import type { StuckReport, Thresholds, WorkerMetrics } from '../wire/protocol'
import type { WorkerHandle } from '../scheduler/state'
import { workerInMemoryBytes, workerSpillBytes } from '../reporting/workers'

export type RowStatus = 'running' | 'paused' | 'closing' | 'closing_gracefully' | 'restarting' | 'closed'

export interface WorkerRow {
  /** The nanny's index; stable across restarts (null for a worker without one). */
  slot: number | null
  /** The live incarnation's address; null while it is being restarted. */
  address: string | null
  name: string | null
  /** The node it runs on (null while restarting). */
  host: string | null
  pid: number | null
  status: RowStatus
  /** While the worker is stuck (paused, cannot spill, no progress): why, and its spill directory's free and waiting bytes. */
  stuck: StuckReport | null
  nthreads: number
  memoryLimit: number
  managedBytes: number
  /** Managed bytes held in memory (managed − spilled.memory). */
  inMemoryBytes: number
  spilledBytes: { memory: number; disk: number }
  rss: number
  /** Process memory that is not managed data in memory: rss − in-memory managed. */
  unmanagedBytes: number
  spillCount: number
  spillSeconds: number
  spillBytesWritten: number
  unspillCount: number
  unspillSeconds: number
  thresholds: Thresholds
  /** The thresholds in bytes of this worker's limit. */
  marks: Thresholds
  tasks: { held: number; processing: number }
  /** Bytes and values fetched from other workers (incoming) and sent to them or to the client (outgoing). */
  transfer: WorkerMetrics['transfer']
  /** P2P shuffle shards pushed to other workers and taken in (bytes), and held now. */
  shuffle: NonNullable<WorkerMetrics['shuffle']>
  restarts: number
  kills: number
  /** Time of the heartbeat these figures come from (ms since the epoch). */
  heartbeatAt: number | null
}

export interface TaskGroup {
  /** The array a chunk belongs to, or the function a task calls. */
  name: string
  total: number
  queued: number
  processing: number
  memory: number
  erred: number
}

export interface TaskView {
  /** Tasks ever submitted. */
  submitted: number
  byState: { queued: number; processing: number; memory: number; erred: number }
  /** Most recent groups last; at most MAX_GROUPS. */
  groups: TaskGroup[]
}

export interface ClusterView {
  time: number
  host: string
  codec: string
  /** The codec 'auto' stands for (lz4, as the design says). */
  codecResolved: string
  spillDir: string
  thresholds: Thresholds
  totals: { workers: number; memoryBytes: number; spillBytes: number; memoryLimit: number; rss: number }
  peakMemoryBytes: number
  peakSpillBytes: number
  lostWorkers: number
  workers: WorkerRow[]
  tasks: TaskView
  /** P2P shuffles in flight: inputs split, the barrier, outputs held. */
  shuffles: ShuffleView[]
}

const MAX_GROUPS = 20
const NO_TRANSFER = { incomingBytes: 0, incomingCount: 0, outgoingBytes: 0, outgoingCount: 0 }
const NO_SHUFFLE = { sentBytes: 0, receivedBytes: 0, heldShards: 0 }

function marks(limit: number, t: Thresholds): Thresholds {
  const bytes = (f: number | false) => (f === false ? false : f * limit)
  return { target: bytes(t.target), spill: bytes(t.spill), pause: t.pause * limit, terminate: t.terminate * limit }
}

function liveRow(slot: number | null, w: WorkerHandle, fallback: Thresholds, restarts = 0, kills = 0): WorkerRow {
  const m: WorkerMetrics | undefined = w.metrics
  const inMemoryBytes = workerInMemoryBytes(m)
  const rss = m?.rss ?? 0
  const thresholds = m?.thresholds ?? fallback
  return {
    slot,
    address: w.address,
    name: w.name,
    host: w.host,
    pid: w.pid || null,
    status: w.status,
    stuck: w.stuck ?? null,
    nthreads: w.nthreads,
    memoryLimit: w.memoryLimit,
    managedBytes: m?.managedBytes ?? 0,
    inMemoryBytes,
    spilledBytes: { memory: m?.spilledBytes.memory ?? 0, disk: workerSpillBytes(m) },
    rss,
    unmanagedBytes: Math.max(0, rss - inMemoryBytes),
    spillCount: m?.spillCount ?? 0,
    spillSeconds: m?.spillSeconds ?? 0,
    spillBytesWritten: m?.spillBytesWritten ?? 0,
    unspillCount: m?.unspillCount ?? 0,
    unspillSeconds: m?.unspillSeconds ?? 0,
    thresholds,
    marks: marks(w.memoryLimit, thresholds),
    tasks: { held: w.held.size, processing: w.processing.size },
    transfer: { ...NO_TRANSFER, ...m?.transfer },
    shuffle: { ...NO_SHUFFLE, ...m?.shuffle },
    restarts,
    kills,
    heartbeatAt: m?.time ?? null,
  }
}

/** A slot whose worker died: its chunks are gone, so it holds nothing. */
function emptyRow(slot: number, status: RowStatus, limit: number, nthreads: number, t: Thresholds, restarts: number, kills: number): WorkerRow {
  return {
    slot,
    address: null,
    name: null,
    host: null,
    pid: null,
    status,
    stuck: null,
    nthreads,
    memoryLimit: limit,
    managedBytes: 0,
    inMemoryBytes: 0,
    spilledBytes: { memory: 0, disk: 0 },
    rss: 0,
    unmanagedBytes: 0,
    spillCount: 0,
    spillSeconds: 0,
    spillBytesWritten: 0,
    unspillCount: 0,
    unspillSeconds: 0,
    thresholds: t,
    marks: marks(limit, t),
    tasks: { held: 0, processing: 0 },
    transfer: { ...NO_TRANSFER },
    shuffle: { ...NO_SHUFFLE },
    restarts,
    kills,
    heartbeatAt: null,
  }
}

export function workerRows(client: Client): WorkerRow[] {
  const { cluster, scheduler } = client
  const rows: WorkerRow[] = []
  const seen = new Set<string>()
  cluster.nannies.forEach((n, i) => {
    const w = n.worker
    const status = n.status
    if (w && w.alive && status === 'running' && scheduler.workers.get(w.address) === w) {
      seen.add(w.address)
      rows.push(liveRow(i, w, scheduler.thresholds, n.restarts, n.kills))
    } else {
      rows.push(emptyRow(i, status, cluster.options.memoryLimit, cluster.options.threadsPerWorker, scheduler.thresholds, n.restarts, n.kills))
    }
  })
  for (const [address, w] of scheduler.workers) if (!seen.has(address)) rows.push(liveRow(null, w, scheduler.thresholds))
  return rows
}

export function taskView(client: Client): TaskView {
  const s = client.scheduler
  const byState = { queued: 0, processing: 0, memory: 0, erred: 0 }
  const groups = new Map<string, TaskGroup>()
  for (const t of s.tasks.values()) {
    // Waiting for inputs counts as queued; a released value is no task any more.
    if (t.state === 'released') continue
    const state = t.state === 'waiting' ? 'queued' : t.state
    byState[state]++
    const name = t.group
    let g = groups.get(name)
    if (!g) groups.set(name, (g = { name, total: 0, queued: 0, processing: 0, memory: 0, erred: 0 }))
    g.total++
    g[state]++
  }
  return { submitted: s.totalTasks, byState, groups: [...groups.values()].slice(-MAX_GROUPS) }
}

export function clusterView(client: Client, host: string): ClusterView {
  const s = client.scheduler
  const workers = workerRows(client)
  const totals = { workers: s.workers.size, memoryBytes: 0, spillBytes: 0, memoryLimit: 0, rss: 0 }
  for (const r of workers) {
    if (r.address === null) continue
    totals.memoryBytes += r.inMemoryBytes
    totals.spillBytes += r.spilledBytes.disk
    totals.memoryLimit += r.memoryLimit
    totals.rss += r.rss
  }
  return {
    time: Date.now(),
    host,
    codec: client.cluster.options.codec,
    codecResolved: client.cluster.options.codec === 'auto' ? 'lz4' : client.cluster.options.codec,
    spillDir: client.cluster.spillDir,
    thresholds: { ...s.thresholds },
    totals,
    peakMemoryBytes: s.peakMemoryBytes,
    peakSpillBytes: s.peakSpillBytes,
    lostWorkers: s.lostWorkers,
    workers,
    tasks: taskView(client),
    shuffles: shuffleViews(s),
  }
}
