import type { SetupConfig, WorkloadType } from './config'
import { InsufficientMemoryError } from '../base/errors'
import type { Resources } from './resources'

/** "GB" in options means GiB, as in dask_setup: maxMemGb 3 − reserve 1 over 2 workers is 1.00 GiB each. */
export const GIB = 2 ** 30

/** Below this a worker cannot hold a useful chunk plus its own overhead; dask_setup's floor too. */
export const MIN_WORKER_BYTES = GIB

export interface MemorySpec {
  /** RAM of the node (after cgroup and batch limits). */
  totalBytes: number
  /** min(maxMemGb, RAM). */
  maxBytes: number
  reserveBytes: number
  /** maxBytes − reserveBytes: what the workers share. */
  usableBytes: number
  /** Each worker's memory limit, an integer number of bytes. */
  perWorkerBytes: number
  nWorkers: number
  threadsPerWorker: number
  processes: boolean
  workloadType: WorkloadType
  /** Set when memory allowed fewer workers than the topology asked for. */
  reducedWorkers?: { requested: number; reason: string }
}

export interface Topology {
  nWorkers: number
  threadsPerWorker: number
  processes: boolean
}

/** Unset reserve: 20% of RAM, clamped to 4–50 GiB (dask_setup's smart default). */
export function defaultReserveBytes(ramBytes: number): number {
  return Math.min(50 * GIB, Math.max(4 * GIB, 0.2 * ramBytes))
}

/**
 * Workers and threads by workload type, as dask_setup's decide_topology: cpu = a process per core
 * with one thread (NumPy-style work scales with processes); io = one in-process worker with many
 * threads, min(16, max(4, ceil(cores / 2))) as dask_setup computes it, since I/O waits rather than
 * computes; mixed = processes of two threads each.
 */
export function decideTopology(workloadType: WorkloadType, cores: number, maxWorkers?: number, threadsPerWorker?: number): Topology {
  const cap = maxWorkers ?? cores
  let t: Topology
  if (workloadType === 'cpu') t = { nWorkers: Math.min(cap, cores), threadsPerWorker: 1, processes: true }
  else if (workloadType === 'io') t = { nWorkers: 1, threadsPerWorker: Math.min(16, Math.max(4, Math.ceil(cores / 2))), processes: false }
  else t = { nWorkers: Math.min(cap, Math.floor(cores / 2)), threadsPerWorker: 2, processes: true }
  t.nWorkers = Math.max(1, t.nWorkers)
  if (threadsPerWorker !== undefined) t.threadsPerWorker = threadsPerWorker
  return t
}

function gib(bytes: number, digits = 2): string {
  return (bytes / GIB).toFixed(digits)
}

/** Memory limits and topology for `config` on a machine with `resources`. Never over-commits the node. */
export function computeMemorySpec(config: SetupConfig, resources: Resources): MemorySpec {
  const totalBytes = resources.memoryBytes
  const maxBytes = config.maxMemGb !== undefined ? Math.min(config.maxMemGb * GIB, totalBytes) : totalBytes
  const reserveBytes = config.reserveMemGb !== undefined ? config.reserveMemGb * GIB : defaultReserveBytes(totalBytes)
  const usableBytes = maxBytes - reserveBytes
  const topology = decideTopology(config.workloadType, resources.cores, config.maxWorkers, config.threadsPerWorker)

  if (usableBytes < MIN_WORKER_BYTES) {
    throw new InsufficientMemoryError(insufficientMessage(config, resources, { totalBytes, maxBytes, reserveBytes, usableBytes }), {
      totalBytes,
      maxBytes,
      reserveBytes,
      usableBytes,
      requiredBytes: MIN_WORKER_BYTES,
      memorySource: resources.source.memory,
    })
  }

  let nWorkers = topology.nWorkers
  let reducedWorkers: MemorySpec['reducedWorkers']
  const fit = Math.floor(usableBytes / MIN_WORKER_BYTES)
  // An explicit count shares the same budget: never that many times the share of the sized count.
  if (config.localWorkers !== undefined && config.localWorkers > 0) {
    nWorkers = config.localWorkers
    if (nWorkers > fit) {
      throw new InsufficientMemoryError(
        `localWorkers: ${nWorkers} workers would get ${gib(usableBytes / nWorkers)} GiB each of ${gib(usableBytes)} GiB usable, under the 1 GiB a worker needs; ` +
          `${gib(usableBytes)} GiB fits ${fit} worker${fit === 1 ? '' : 's'}: lower localWorkers to ${fit} or less, or raise maxMemGb / lower reserveMemGb`,
        { field: 'localWorkers', localWorkers: nWorkers, usableBytes, perWorkerBytes: Math.floor(usableBytes / nWorkers), requiredBytes: MIN_WORKER_BYTES, fits: fit },
      )
    }
  } else if (nWorkers > fit) {
    reducedWorkers = {
      requested: nWorkers,
      reason: `${nWorkers} workers would get ${gib(usableBytes / nWorkers)} GiB each, under the 1 GiB minimum; ` +
        `${gib(usableBytes)} GiB usable fits ${fit}`,
    }
    nWorkers = fit
  }
  const spec: MemorySpec = {
    totalBytes,
    maxBytes,
    reserveBytes,
    usableBytes,
    perWorkerBytes: Math.floor(usableBytes / nWorkers),
    nWorkers,
    threadsPerWorker: topology.threadsPerWorker,
    processes: topology.processes,
    workloadType: config.workloadType,
  }
  if (reducedWorkers) spec.reducedWorkers = reducedWorkers
  return spec
}

function insufficientMessage(
  config: SetupConfig,
  resources: Resources,
  m: { totalBytes: number; maxBytes: number; reserveBytes: number; usableBytes: number },
): string {
  const reserveWhy = config.reserveMemGb !== undefined ? 'reserveMemGb' : 'the default reserve (20% of RAM, at least 4 GiB)'
  const cap = config.maxMemGb !== undefined && config.maxMemGb * GIB < m.totalBytes ? ` capped by maxMemGb to ${gib(m.maxBytes)} GiB` : ''
  const lines = [
    `not enough memory for one worker: ${gib(m.totalBytes)} GiB of RAM (from ${resources.source.memory})${cap}, ` +
      `minus ${gib(m.reserveBytes)} GiB reserved by ${reserveWhy}, leaves ${gib(Math.max(0, m.usableBytes))} GiB; a worker needs at least 1.00 GiB.`,
    'Try:',
  ]
  const shortfall = MIN_WORKER_BYTES - m.usableBytes
  const lowerReserve = m.reserveBytes - shortfall
  if (lowerReserve >= 0) lines.push(`  - lower reserveMemGb to ${Math.floor((lowerReserve / GIB) * 10) / 10} or less`)
  if (m.maxBytes < m.totalBytes) lines.push(`  - raise maxMemGb (now ${config.maxMemGb}) to at least ${Math.ceil(((m.reserveBytes + MIN_WORKER_BYTES) / GIB) * 10) / 10}`)
  if (resources.source.memory === 'pbs') lines.push('  - request more memory for the job (#PBS -l mem=...)')
  else if (resources.source.memory === 'slurm') lines.push('  - request more memory for the job (#SBATCH --mem=...)')
  else if (resources.source.memory === 'cgroup') lines.push('  - raise the memory limit of the container or cgroup')
  else lines.push('  - close other applications or run on a node with more memory')
  return lines.join('\n')
}

/** Python's spelling, so the summary reads exactly like the recipe's. */
function py(b: boolean): string {
  return b ? 'True' : 'False'
}

/** The recipe's configuration summary, as setupClient prints it. */
export function formatSummary(spec: MemorySpec, opts: { spillDir: string; spillCompression: string; commCompression: boolean; listening?: string; localWorkers?: number }): string {
  return [
    '[spillway] Configuration summary',
    `temp/spill dir: ${opts.spillDir}`,
    ...(opts.listening ? [`Workers from elsewhere join at ${opts.listening}${opts.localWorkers === 0 ? ' (none started here)' : ''}`] : []),
    `Workers: ${spec.nWorkers} | threads/worker: ${spec.threadsPerWorker} | processes: ${py(spec.processes)}`,
    `Memory: total ~${gib(spec.totalBytes, 1)} GiB | usable ~${gib(spec.usableBytes, 1)} GiB | per-worker ~${gib(spec.perWorkerBytes, 1)} GiB`,
    `Compression: spill=${opts.spillCompression} | comm=${py(opts.commCompression)}`,
  ].join('\n')
}
