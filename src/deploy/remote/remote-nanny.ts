// A nanny on a node of its own (`spillway worker`): it starts a worker
// process that joins the scheduler over TCP, kills it at the terminate
// threshold, and starts a new one whenever it dies, as the local nanny does.
// It gives up when the scheduler refuses its worker, when the worker cannot
// start at all (no secret), when the scheduler file is removed (the cluster
// closed), when the scheduler has been out of reach for `deathTimeoutMs`,
// so no worker outlives its cluster, or when the worker keeps dying soon
// after it starts (each restart waits longer, and the count is bounded).

import type { ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { forkWorker } from '../nanny'
import { mallocEnv } from '../malloc-env'
import { watchTerminate } from '../terminate-watch'
import { EXIT_CONFIG, EXIT_REFUSED, EXIT_RETIRED, EXIT_UNREACHABLE, JOIN_ENV, type JoinSpec } from '../../comm/join'
import { crashBackoff, type CrashBackoff } from '../restart-policy'
import { parseSchedulerFile } from '../../comm/scheduler-file'
import type { TlsFiles } from '../../comm/address'

export interface RemoteNannyOptions {
  slot: number
  host: string
  nthreads: number
  memoryLimit: number
  /** This node's spill base: the worker spills under it, in a directory of its own. */
  spillDir: string
  /** Host or address its data server listens on. */
  dataHost: string
  /** Its address; re-read from the scheduler file (when given) at each start. */
  scheduler: string
  secretFile: string
  tls?: TlsFiles
  /** When given, its removal means the cluster closed. */
  schedulerFile?: string
  /** Kill the worker when its process memory passes this fraction of its limit. */
  terminate: number
  deathTimeoutMs: number
  log: (message: string) => void
}

/** How long a retiring worker's values may take to move before it is stopped anyway. */
export const RETIRE_GRACE_MS = 5 * 60_000

export type NannyEnd = { reason: 'closed' | 'refused' | 'failed' | 'unreachable' | 'stopped'; message: string }

export class RemoteNanny {
  #child: ChildProcess | undefined
  #incarnation = 0
  #stopping = false
  #unreachableSince: number | undefined
  #watch: NodeJS.Timeout | undefined
  #startedAt = 0
  readonly #crashes: CrashBackoff = crashBackoff()
  #end!: (e: NannyEnd) => void
  /** Settles once this nanny has stopped for good, saying why. */
  readonly done: Promise<NannyEnd>
  restarts = 0
  kills = 0

  get slot(): number {
    return this.o.slot
  }

  constructor(private readonly o: RemoteNannyOptions) {
    this.done = new Promise((resolve) => (this.#end = resolve))
  }

  start(): void {
    // A scheduler started again (a new run of the same job) writes a new address into the file.
    const current = this.o.schedulerFile ? parseSchedulerFile(this.o.schedulerFile)?.address : undefined
    if (current) this.o.scheduler = current
    const jobId = process.env.SLURM_JOB_ID ?? process.env.PBS_JOBID
    // Several nannies may run on one host (ranks of an allocation): the pid
    // keeps names apart. The name stays the same across restarts (as Dask's
    // do), so work restricted to it by name follows it; its address changes.
    const name = `${this.o.host}-${process.pid}-${this.o.slot}`
    this.#incarnation++
    this.#startedAt = Date.now()
    const spec: JoinSpec = {
      scheduler: this.o.scheduler,
      secretFile: this.o.secretFile,
      ...(this.o.tls ? { tls: this.o.tls } : {}),
      hello: {
        host: this.o.host,
        pid: process.pid,
        name,
        nthreads: this.o.nthreads,
        memoryLimit: this.o.memoryLimit,
        spillDir: this.o.spillDir,
        ...(jobId ? { jobId } : {}),
        dataAddress: `tcp://${this.o.dataHost.includes(':') ? `[${this.o.dataHost}]` : this.o.dataHost}:0`,
      },
    }
    const child = forkWorker(this.o.nthreads, { ...mallocEnv(this.o.memoryLimit), [JOIN_ENV]: JSON.stringify(spec) })
    this.#child = child
    child.once('exit', (code, signal) => this.#onExit(code, signal))
    this.#watchMemory(child)
  }

  #watchMemory(child: ChildProcess): void {
    clearInterval(this.#watch)
    this.#watch = watchTerminate(child, {
      memoryLimit: this.o.memoryLimit,
      terminate: () => this.o.terminate,
      onKill: (why) => {
        this.kills++
        this.o.log(`worker ${this.o.slot}: ${why}`)
      },
    })
  }

  #onExit(code: number | null, signal: NodeJS.Signals | null): void {
    clearInterval(this.#watch)
    if (code === EXIT_RETIRED) return this.#end({ reason: 'stopped', message: 'retired by the scheduler (its values moved to other workers)' })
    if (this.#stopping) return this.#end({ reason: 'stopped', message: 'stopped' })
    if (code === EXIT_REFUSED) return this.#end({ reason: 'refused', message: 'the scheduler refused the worker (see above)' })
    if (code === EXIT_CONFIG) return this.#end({ reason: 'failed', message: `worker ${this.o.slot} cannot start (see above); starting it again would fail the same way` })
    if (this.o.schedulerFile && !existsSync(this.o.schedulerFile)) {
      return this.#end({ reason: 'closed', message: `the scheduler file ${this.o.schedulerFile} is gone: the cluster closed` })
    }
    const now = Date.now()
    if (code === EXIT_UNREACHABLE || (code === 0 && !signal)) this.#unreachableSince ??= now
    else this.#unreachableSince = undefined
    if (this.#unreachableSince !== undefined && now - this.#unreachableSince > this.o.deathTimeoutMs) {
      return this.#end({ reason: 'unreachable', message: `no scheduler at ${this.o.scheduler} for ${Math.round((now - this.#unreachableSince) / 1000)} s (deathTimeout)` })
    }
    // A worker that could not connect tries again after a pause; one that
    // died is replaced, at once the first time, later ever more slowly while
    // it keeps dying young, and not at all past the bound.
    let delay = 1000
    if (this.#unreachableSince === undefined) {
      const next = this.#crashes.next(now - this.#startedAt)
      if (next === 'give-up') {
        return this.#end({ reason: 'failed', message: `worker ${this.o.slot} died ${this.#crashes.count} times in a row soon after starting (last: ${signal ? `killed by ${signal}` : `exit code ${code}`}); not starting it again` })
      }
      delay = next
      if (delay > 0) this.o.log(`worker ${this.o.slot} died (${signal ? `killed by ${signal}` : `exit code ${code}`}); starting it again in ${(delay / 1000).toFixed(1)} s`)
    }
    this.restarts++
    setTimeout(() => !this.#stopping && this.start(), delay)
  }

  /**
   * Graceful retirement: the worker asks the scheduler to move its values to
   * other workers and close it; past `graceMs` it is stopped as stop() does.
   */
  retire(graceMs = RETIRE_GRACE_MS): Promise<NannyEnd> {
    const child = this.#child
    if (this.#stopping || !child || child.exitCode !== null || child.signalCode !== null) return this.stop()
    this.#stopping = true
    child.kill('SIGUSR2')
    const timer = setTimeout(() => void this.stop(), graceMs)
    timer.unref()
    return this.done.finally(() => clearTimeout(timer))
  }

  /** Stops the worker (the scheduler recomputes what it held) and this nanny. */
  stop(): Promise<NannyEnd> {
    this.#stopping = true
    clearInterval(this.#watch)
    const child = this.#child
    if (!child || child.exitCode !== null || child.signalCode !== null) this.#end({ reason: 'stopped', message: 'stopped' })
    else child.kill('SIGTERM')
    return this.done
  }
}
