// Messages between the scheduler and a worker. Plain, structured-clone-able
// data only, so the transport can later be a socket instead of an IPC channel.

import type { ChunkSpec, Partial, SpillMetrics } from '../spill-buffer'

export interface Thresholds {
  target: number
  spill: number
  pause: number
  terminate: number
}

/** What a worker needs to start: sent in the first message. */
export interface WorkerStart {
  address: string
  name: string
  nthreads: number
  memoryLimit: number
  thresholds: Thresholds
  spillDir: string
  codec: string
  level?: number
  heartbeatMs: number
  monitorMs: number
}

export type WorkerStatus = 'running' | 'paused' | 'closing'

/** Heartbeat metrics, in Dask's names (camelCase). */
export interface WorkerMetrics extends SpillMetrics {
  rss: number
  status: WorkerStatus
  memoryLimit: number
  thresholds: Thresholds
  taskCounts: { executing: number; done: number; failed: number }
  time: number
}

/** How a chunk task computes its chunk: a function name and its arguments. */
export type TaskFn = { fn: 'chunk'; spec: ChunkSpec }

export type Request =
  | { op: 'start'; config: WorkerStart }
  | { op: 'run'; key: string; task: TaskFn }
  | { op: 'reduce'; key: string; dtype: string; reduceOp: string }
  | { op: 'reduce-many'; keys: string[]; dtype: string; reduceOp: string }
  | { op: 'release'; keys: string[] }
  | { op: 'set-thresholds'; thresholds: Partial_<Thresholds> }
  | { op: 'metrics' }
  | { op: 'close' }

type Partial_<T> = { [K in keyof T]?: T[K] }

export interface RunResult {
  nbytes: number
  /** The key was released while the run waited for a slot: nothing was stored. */
  skipped?: boolean
  /** Sent at most every few tens of ms: heartbeats carry the rest. */
  metrics?: WorkerMetrics
}

/** Codes of a chunk read that failed for that chunk alone: its spill file is missing, unreadable or corrupt. */
export const UNREADABLE_CODES: ReadonlySet<string> = new Set(['ERR_SPILLWAY_IO', 'ERR_SPILLWAY_CORRUPT_FRAME'])

export interface ReduceManyResult {
  /** One per key, null where the key is not held or could not be read. */
  partials: (Partial | null)[]
  /** Keys whose chunk could not be read back (one of UNREADABLE_CODES). */
  unreadable?: Array<{ key: string; code: string; message: string }>
}

export interface ReduceResult {
  partial: Partial | null
}

export interface ErrorPayload {
  code?: string
  message: string
}

export type WorkerToScheduler =
  | { kind: 'reply'; id: number; ok: true; result: unknown }
  | { kind: 'reply'; id: number; ok: false; error: ErrorPayload }
  | { kind: 'heartbeat'; metrics: WorkerMetrics }
  | { kind: 'log'; level: 'warn' | 'info'; message: string }

export type SchedulerToWorker = { kind: 'request'; id: number; request: Request }
