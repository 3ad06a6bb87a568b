// The one place a worker's start settings are built, with their defaults:
// local nannies and workers joining over the network get theirs here.

import { OPTIONS } from '../config/options'
import type { Thresholds, WorkerStart } from '../wire/protocol'

/** What the cluster tells every worker, beside what is the worker's own. */
export interface ClusterSettings {
  codec: string
  level?: number
  /** Bytes each worker's spill files may take on disk (Dask's max-spill); undefined: no cap. */
  maxSpill?: number
  heartbeatMs: number
  monitorMs: number
  stuckTimeoutMs: number
  /** Share of a worker's memory limit that incoming transfers may take at once. */
  transferShare: number
  /** A joined worker that sends nothing (no heartbeat, no reply) this long is taken as lost: its node may be gone from the network. */
  workerTtlMs: number
  /** How long a task module may take to import on a worker before the tasks that need it fail. */
  importTimeoutMs: number
}

export interface ClusterSettingsOptions {
  codec: string
  level?: number
  maxSpill?: number
  heartbeatMs?: number
  monitorMs?: number
  stuckTimeoutMs?: number
  workerTtlMs?: number
  importTimeoutMs?: number
}

export const DEFAULT_SETTINGS = {
  heartbeatMs: 200,
  monitorMs: 50,
  /** A paused worker that cannot spill and makes no progress this long is stuck. */
  stuckTimeoutMs: OPTIONS.stuckTimeout.default * 1000,
  /** Dask's default share of the limit for incoming transfers. */
  transferShare: 0.1,
  // Dask's worker-ttl: a task that holds its worker's event loop for minutes must not make it look lost.
  workerTtlMs: OPTIONS.workerTtl.default * 1000,
  importTimeoutMs: OPTIONS.importTimeout.default * 1000,
} as const

export function clusterSettings(o: ClusterSettingsOptions): ClusterSettings {
  return {
    codec: o.codec,
    level: o.level,
    maxSpill: o.maxSpill,
    heartbeatMs: o.heartbeatMs ?? DEFAULT_SETTINGS.heartbeatMs,
    monitorMs: o.monitorMs ?? DEFAULT_SETTINGS.monitorMs,
    stuckTimeoutMs: o.stuckTimeoutMs ?? DEFAULT_SETTINGS.stuckTimeoutMs,
    transferShare: DEFAULT_SETTINGS.transferShare,
    workerTtlMs: o.workerTtlMs ?? DEFAULT_SETTINGS.workerTtlMs,
    importTimeoutMs: o.importTimeoutMs ?? DEFAULT_SETTINGS.importTimeoutMs,
  }
}

/** What is the worker's own: where it is, what it has, where it spills. */
export interface WorkerIdentity {
  address: string
  name: string
  nthreads: number
  memoryLimit: number
  spillDir: string
  dataAddress: string
}

export function workerStart(s: ClusterSettings, thresholds: Thresholds, secretHex: string, w: WorkerIdentity): WorkerStart {
  return {
    ...w,
    thresholds,
    codec: s.codec,
    level: s.level,
    ...(s.maxSpill === undefined ? {} : { maxSpill: s.maxSpill }),
    heartbeatMs: s.heartbeatMs,
    monitorMs: s.monitorMs,
    secret: secretHex,
    transferLimit: Math.max(1, Math.floor(w.memoryLimit * s.transferShare)),
    stuckTimeoutMs: s.stuckTimeoutMs,
    importTimeoutMs: s.importTimeoutMs,
  }
}
