// Messages between the scheduler and a worker. Plain, structured-clone-able
// data only, so the transport can later be a socket instead of an IPC channel.

import type { FnDesc } from './functions'
import type { Path } from './nesting'
import type { RawDtype, ValueFormat } from './values'
import type { ChunkSpec, ReducePartial, SpillMetrics } from '../native/spill-buffer'

import type { Thresholds } from '../config/thresholds'
export type { Thresholds }

/** What a worker needs to start: sent in the first message. */
export interface WorkerStart {
  /** The address the scheduler knows it by (client.run, whoHas, `workers`); empty: its data address, once bound. */
  address: string
  name: string
  nthreads: number
  memoryLimit: number
  thresholds: Thresholds
  spillDir: string
  codec: string
  level?: number
  /** Bytes its spill files may take on disk; absent: no cap. */
  maxSpill?: number
  heartbeatMs: number
  monitorMs: number
  /** Hex of the cluster's secret: data connections prove they hold it. */
  secret: string
  /** Where the data server listens (unix:/path or tcp://host:port). */
  dataAddress: string
  /** Bytes of incoming transfers in flight at once (Dask: 10% of the limit). */
  transferLimit: number
  /** A paused worker that cannot spill and makes no progress this long reports itself stuck. */
  stuckTimeoutMs: number
  /** How long a task module may take to import before the tasks that need it fail (absent: 60 s). */
  importTimeoutMs?: number
}

/** 'closing_gracefully' is the scheduler's own: a worker being retired (Dask's name). */
export type WorkerStatus = 'running' | 'paused' | 'closing' | 'closing_gracefully'

/**
 * Why a paused worker cannot get back under its thresholds: its spill
 * writes fail for want of space ('spill-full') or otherwise
 * ('spill-failing'), or no managed value is left in memory to write
 * ('nothing-to-spill': the memory is held outside spillway's store).
 */
export type StuckReason = 'spill-full' | 'spill-failing' | 'nothing-to-spill'

/** A worker's own account of being stuck, sent with its heartbeats while it lasts. */
export interface StuckReport {
  reason: StuckReason
  /** Since when it has made no progress (ms since the epoch). */
  since: number
  spillDir: string
  /** Bytes this user may still write there (undefined where the filesystem cannot say). */
  freeBytes?: number
  /** Managed bytes in memory that must go to disk to get back under the target. */
  waitingBytes: number
  rss: number
  memoryLimit: number
  lastWriteError?: string
}

/** Heartbeat metrics, in Dask's names (camelCase). */
export interface WorkerMetrics extends SpillMetrics {
  rss: number
  status: WorkerStatus
  memoryLimit: number
  thresholds: Thresholds
  taskCounts: { executing: number; done: number; failed: number }
  /**
   * Where the worker's time went: running tasks (summed over its slots; a
   * built-in chunk's includes the spill writes it caused) and paused.
   */
  timings: { taskSeconds: number; pausedSeconds: number }
  /** Bytes and values moved to and from other workers. */
  transfer: { incomingBytes: number; incomingCount: number; outgoingBytes: number; outgoingCount: number }
  /** Set while the worker is stuck (paused, cannot spill, no progress). */
  stuck?: StuckReport
  /** Bytes it may still spill: its spill disk's free space, within its maxSpill cap (undefined where neither says). */
  spillFreeBytes?: number
  /** P2P shuffle shards this worker has pushed and taken in (bytes, serialised), and those it holds now. */
  shuffle?: { sentBytes: number; receivedBytes: number; heldShards: number }
  time: number
}

/** An input of a call: its key and where its value goes in the arguments. */
export interface DepRef {
  key: string
  path: Path
}

/**
 * What a task runs: a built-in chunk generated natively, or a call of a user
 * function on arguments with its inputs (other tasks' values) put in place.
 */
export type TaskFn =
  | { fn: 'chunk'; spec: ChunkSpec }
  | { fn: 'call'; func: FnDesc; args: unknown; deps: DepRef[]; dtype?: RawDtype }

/**
 * A run's inputs: each one's format, and where to fetch it (the holder's
 * data address and the value's size) when the running worker does not hold it.
 */
export type Inputs = Record<string, { format: ValueFormat; address?: string; nbytes: number }>

export type Request =
  | { op: 'start'; config: WorkerStart }
  | { op: 'run'; key: string; task: TaskFn; inputs?: Inputs }
  | { op: 'put'; key: string; data: Uint8Array }
  | { op: 'cancel'; key: string }
  | { op: 'reduce'; key: string; dtype: string; reduceOp: string }
  | { op: 'reduce-many'; keys: string[]; dtype: string; reduceOp: string }
  | { op: 'release'; keys: string[] }
  /** Gives back the runs of these keys that have not started: they end as skipped (stealing.ts). */
  | { op: 'steal'; keys: string[] }
  /** Every shard of a shuffle that will not be read (it failed, or its outputs were let go of before they ran). */
  | { op: 'shuffle-drop'; shuffle: string }
  | { op: 'set-thresholds'; thresholds: Partial_<Thresholds> }
  | { op: 'metrics' }
  /**
   * Copies values from a peer's data server into this worker's store
   * (retirement, rebalance, replicate). A paused worker takes nothing more:
   * the keys it did not take come back as `refused`.
   */
  | { op: 'acquire'; from: string; keys: Array<{ key: string; nbytes: number }> }
  /** Calls a function on this worker, outside the task graph (client.run). */
  | { op: 'call'; func: FnDesc; args: unknown[] }
  /** Keeps a joined worker's link alive both ways (its reply is not awaited). */
  | { op: 'ping' }
  /** `retired`: stopped for good (graceful retirement), so its nanny does not start it again. */
  | { op: 'close'; retired?: boolean }

type Partial_<T> = { [K in keyof T]?: T[K] }

export interface RunResult {
  nbytes: number
  /** How the value's bytes are laid out, for a call's result. */
  format?: ValueFormat
  /** The key was released while the run waited for a slot: nothing was stored. */
  skipped?: boolean
  /** Sent at most every few tens of ms: heartbeats carry the rest. */
  metrics?: WorkerMetrics
}

/** Codes of a chunk read that failed for that chunk alone: its spill file is missing, unreadable or corrupt. */
export const UNREADABLE_CODES: ReadonlySet<string> = new Set(['ERR_SPILLWAY_IO', 'ERR_SPILLWAY_CORRUPT_FRAME'])

export interface AcquireResult {
  /** Keys now held here (taken in, or already held). */
  got: string[]
  /** Keys the peer did not hand over (gone, unreadable, or the peer unreachable). */
  missing: string[]
  /** Keys not taken: this worker paused while taking the others in, the peer could not be reached, or the store failed (`error`). */
  refused: string[]
  /** Why keys were refused, when it was not a pause. */
  error?: string
  metrics: WorkerMetrics
}

export interface CallResult {
  /** The function's return value, encoded as a task result is (values.ts). */
  value: Uint8Array
  format: ValueFormat
}

export interface ReduceManyResult {
  /** One per key, null where the key is not held or could not be read. */
  partials: (ReducePartial | null)[]
  /** Keys whose chunk could not be read back (one of UNREADABLE_CODES). */
  unreadable?: Array<{ key: string; code: string; message: string }>
}

export interface ReduceResult {
  partial: ReducePartial | null
}

export interface ErrorPayload {
  code?: string
  message: string
  /**
   * A user task's own error: name, message, stack and `code` as thrown on
   * the worker. Its presence alone makes the failure ERR_SPILLWAY_TASK,
   * whatever `code` says.
   */
  remote?: { name: string; message: string; stack?: string; code?: string | number }
  /** Inputs a run could not get (ERR_SPILLWAY_MISSING_DEP): the scheduler makes them again. */
  missing?: string[]
  /** A WorkerStuckError's details (a result that could not be stored). */
  stuck?: Record<string, unknown>
}

/**
 * A task's own sub-task, as its worker submits it for the task's client
 * (getClient()): a call of a user function, never a built-in chunk.
 */
export interface SubTask {
  key: string
  task: Extract<TaskFn, { fn: 'call' }>
  /** Keys whose values it takes: each one known to the scheduler, or submitted earlier in the same call. */
  deps: string[]
  group: string
  priority?: number
  retries?: number
  workers?: string[]
}

/**
 * What a running task asks of the scheduler, through its worker. `run`
 * names the run on that worker: the keys it holds are let go of when it
 * says `done`, or when its worker is lost. A seceded run (waiting on its
 * sub-tasks) does not count against its worker's threads.
 */
export type TaskCall =
  /** `parent`: the key of the task whose run submits (a sub-task under it, or one of its submitters, is refused: ERR_SPILLWAY_CYCLE). */
  | { op: 'submit'; run: string; tasks: SubTask[]; parent?: string }
  /** Answered once every key is held or has failed: KeyOutcome[], in order. */
  | { op: 'wait'; run: string; keys: string[] }
  | { op: 'release'; run: string; keys: string[] }
  | { op: 'cancel'; run: string; keys: string[] }
  | { op: 'secede'; run: string }
  | { op: 'rejoin'; run: string }
  | { op: 'done'; run: string }

/** Where a waited-for key ended up: the holder's data address and the value's layout, or its error. */
export type KeyOutcome =
  | { key: string; state: 'memory'; format: ValueFormat; nbytes: number; address: string }
  | { key: string; state: 'erred'; error: ErrorPayload }

export type WorkerToScheduler =
  | { kind: 'reply'; id: number; ok: true; result: unknown }
  | { kind: 'reply'; id: number; ok: false; error: ErrorPayload }
  | { kind: 'heartbeat'; metrics: WorkerMetrics }
  | { kind: 'log'; level: 'warn' | 'info'; message: string }
  /** The worker asks to leave (its lifetime is up): its values move to the others before it is closed. */
  | { kind: 'retire'; reason: string }
  | { kind: 'call'; id: number; call: TaskCall }

export type SchedulerToWorker =
  | { kind: 'request'; id: number; request: Request }
  | { kind: 'answer'; id: number; ok: true; result: unknown }
  | { kind: 'answer'; id: number; ok: false; error: ErrorPayload }
