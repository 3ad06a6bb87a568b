// The workers of one node for a scheduler elsewhere: sized from this node's
// own memory, cores, cgroups and batch variables, spilling under this node's
// $PBS_JOBFS / $TMPDIR / tempBaseDir, each under a nanny. Used by
// `spillway worker` and by the ranks of an allocation other than rank 0.

import { hostname } from 'node:os'
import type { SetupConfig } from '../../config/config'
import { detectResources } from '../../config/resources'
import { computeMemorySpec, MIN_WORKER_BYTES, type MemorySpec } from '../../config/sizing'
import { ConfigError } from '../../base/errors'
import { createSpillDir } from '../../config/tempdir'
import { parseAddress, type TlsFiles } from '../../comm/address'
import { addressOfInterface } from '../../comm/interface'
import { RemoteNanny, type NannyEnd } from './remote-nanny'
import { readSchedulerFile, readSecretFile, secretFileOf } from '../../comm/scheduler-file'

export interface NodeWorkersOptions {
  /** Sizing, thresholds and spill base, as setupClient takes them. */
  config: SetupConfig
  /** The scheduler file to wait for (its secret beside it) ... */
  schedulerFile?: string
  /** ... or the scheduler's address and the secret's file. */
  scheduler?: string
  secretFile?: string
  /** For a tls:// scheduler: the CA it is signed by (and this node's certificate and key, where it asks for one). */
  tls?: TlsFiles
  /** Address (or interface) the workers' data servers listen on. */
  host?: string
  interface?: string
  /** Without a scheduler this long, the workers exit. */
  deathTimeoutMs: number
  /** Exactly this many worker processes (Dask's --nworkers), sharing the node's usable memory, instead of the sizing's choice. */
  nWorkers?: number
  /** Processes on this node that each run workers like these (ranks of an allocation): they share its memory and cores. */
  share?: number
  /** Retire the workers after this long (before a walltime), each after a further random 0..stagger. */
  lifetimeMs?: number
  lifetimeStaggerMs?: number
  log: (message: string) => void
}

/** This process's part of a node sized as a whole: `share` processes run workers on it. */
function shareOf(spec: MemorySpec, share: number): MemorySpec {
  if (share <= 1) return spec
  const usableBytes = Math.floor(spec.usableBytes / share)
  const nWorkers = Math.max(1, Math.floor(spec.nWorkers / share))
  return { ...spec, usableBytes, nWorkers, perWorkerBytes: Math.floor(usableBytes / nWorkers) }
}

function withWorkers(spec: MemorySpec, n: number | undefined): MemorySpec {
  if (n === undefined) return spec
  const perWorkerBytes = Math.floor(spec.usableBytes / n)
  if (perWorkerBytes < MIN_WORKER_BYTES) {
    throw new ConfigError([{ field: 'nworkers', value: n, allowed: `at most ${Math.floor(spec.usableBytes / MIN_WORKER_BYTES)}: each worker needs 1 GiB of the ${(spec.usableBytes / 2 ** 30).toFixed(2)} GiB usable` }], 'worker options')
  }
  return { ...spec, nWorkers: n, perWorkerBytes }
}

const LOOPBACK = /^(127\.|::1$|localhost$)/

/** Runs this node's workers until the cluster closes, the scheduler is gone, or `signal` aborts; says how they ended. */
export async function runNodeWorkers(o: NodeWorkersOptions, signal?: AbortSignal): Promise<NannyEnd[]> {
  const address = o.scheduler ?? (await readSchedulerFile(o.schedulerFile!, o.deathTimeoutMs)).address
  const secretFile = o.secretFile ?? secretFileOf(o.schedulerFile!)
  // Read here once, before any worker starts: a missing or malformed secret
  // is one clear error, not a worker that fails (and is restarted) per slot.
  readSecretFile(secretFile)
  const endpoint = parseAddress(address)
  const spec = withWorkers(shareOf(computeMemorySpec(o.config, await detectResources()), o.share ?? 1), o.nWorkers)
  const spill = await createSpillDir(o.config, { expectedSpillBytes: spec.usableBytes })
  // Reachable from the scheduler: loopback only when the scheduler is on loopback too.
  const dataHost = o.interface ? addressOfInterface(o.interface) : o.host ?? (endpoint.kind === 'tcp' && LOOPBACK.test(endpoint.host) ? '127.0.0.1' : hostname())
  const nannies = Array.from(
    { length: spec.nWorkers },
    (_, slot) =>
      new RemoteNanny({
        slot,
        host: hostname(),
        nthreads: spec.threadsPerWorker,
        memoryLimit: spec.perWorkerBytes,
        spillDir: spill.path,
        dataHost,
        scheduler: address,
        secretFile,
        tls: o.tls,
        schedulerFile: o.schedulerFile,
        terminate: o.config.memoryTerminate,
        deathTimeoutMs: o.deathTimeoutMs,
        log: o.log,
      }),
  )
  for (const n of nannies) n.start()
  o.log(`${nannies.length} worker(s) of ${(spec.perWorkerBytes / 2 ** 30).toFixed(2)} GiB, ${spec.threadsPerWorker} thread(s) each, joining ${address}; spilling under ${spill.path}`)
  const timers = nannies.map((n) => {
    if (o.lifetimeMs === undefined) return undefined
    const after = o.lifetimeMs + Math.random() * (o.lifetimeStaggerMs ?? 0)
    return setTimeout(() => {
      o.log(`worker ${n.slot} retires after its lifetime (${Math.round(after / 1000)} s): its values move to other workers first`)
      void n.retire()
    }, after)
  })
  const stop = () => nannies.forEach((n) => void n.stop())
  signal?.addEventListener('abort', stop)
  try {
    return await Promise.all(nannies.map((n) => n.done))
  } finally {
    for (const t of timers) clearTimeout(t)
    signal?.removeEventListener('abort', stop)
    await spill.remove()
  }
}
