// The nanny starts a worker process, watches its memory from outside, kills
// it at the terminate threshold, and starts a replacement whenever it dies,
// as Dask's Nanny does. Each incarnation is a new worker process with a new
// address under the same name, so work restricted to the name follows it.
// One that keeps dying soon after it starts is started ever more slowly, and
// not again past a bound (restart-policy.ts).

import { fork, type ChildProcess } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { ownModule, ownModuleExecArgv } from '../base/paths'
import type { SchedulerToWorker, WorkerMetrics, WorkerStart, WorkerToScheduler } from '../wire/protocol'
import { WorkerLostError, WorkerRpc } from '../comm/rpc'
import type { Scheduler } from '../scheduler/scheduler'
import { watchTerminate } from './terminate-watch'
import { ChildTransport } from '../comm/transport'
import { workerStart, type ClusterSettings } from './worker-settings'
import { WorkerHandle } from '../scheduler/state'
import type { SummaryLog } from '../base/log-summary'
import { crashBackoff } from './restart-policy'
import { mallocEnv } from './malloc-env'

export interface NannyOptions {
  index: number
  nthreads: number
  memoryLimit: number
  spillDir: string
  settings: ClusterSettings
  log?: (level: string, message: string) => void
  /** Where links closed for a malformed message are counted and logged. */
  malformed?: SummaryLog
  /** Hex of the cluster's secret, for the workers' data connections. */
  secret: string
  /** Directory for the workers' data sockets (0700). */
  socketDir: string
}

const MAX_RESTARTS = 100
/** Tries to bring up a worker whose process dies before it is ready. */
const STARTUP_ATTEMPTS = 5
/** How long a worker whose channel closed may take to report its exit status. */
const EXIT_WAIT_MS = 1000

/**
 * A worker process. `env` adds to this process's environment (a joining
 * worker's SPILLWAY_JOIN).
 */
export function forkWorker(nthreads: number, env: Record<string, string> = {}): ChildProcess {
  return fork(ownModule('worker/entry'), [], {
    serialization: 'advanced',
    // --expose-gc: the memory monitor collects user tasks' garbage before spilling managed values for it.
    execArgv: [...ownModuleExecArgv(), '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: {
      ...process.env,
      UV_THREADPOOL_SIZE: String(nthreads + 2),
      // Large chunks must go back to the OS when freed, or process memory
      // never falls and the spill threshold fires forever (Dask sets the
      // trim threshold for the same reason).
      MALLOC_MMAP_THRESHOLD_: '65536',
      MALLOC_TRIM_THRESHOLD_: '65536',
      ...env,
    },
  })
}

export class Nanny {
  #child: ChildProcess | undefined
  #handle: WorkerHandle | undefined
  #watch: NodeJS.Timeout | undefined
  #lostTimer: NodeJS.Timeout | undefined
  #incarnation = 0
  #closing = false
  readonly #crashes = crashBackoff()
  #gaveUp = false
  /** Set by restartWorker(): the next exit is asked for, not a crash. */
  #restartAsked = false
  #restartTimer: NodeJS.Timeout | undefined
  /** Ends a restartWorker() wait (the new worker registered, or the nanny closed or gave up first). */
  #restarted: (() => void) | undefined
  #restarting: Promise<void> | undefined
  restarts = 0
  kills = 0

  constructor(
    private readonly scheduler: Scheduler,
    private readonly opts: NannyOptions,
  ) {}

  get worker(): WorkerHandle | undefined {
    return this.#handle
  }

  get pid(): number | undefined {
    return this.#child?.pid
  }

  get status(): 'running' | 'restarting' | 'closed' {
    if (this.#closing || this.#gaveUp) return 'closed'
    return this.#handle?.alive ? 'running' : 'restarting'
  }

  /**
   * Starts a worker and registers it with the scheduler. A worker that dies
   * before it is ready is started again, as one that dies later would be.
   */
  async start(): Promise<WorkerHandle> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#startOnce()
      } catch (e) {
        if (!(e instanceof WorkerLostError) || this.#closing || this.scheduler.closed || attempt >= STARTUP_ATTEMPTS) throw e
        this.restarts++
        this.opts.log?.('warn', `worker ${this.opts.index} died while starting; starting it again (attempt ${attempt + 1} of ${STARTUP_ATTEMPTS})`)
      }
    }
  }

  async #startOnce(): Promise<WorkerHandle> {
    const n = this.#incarnation++
    const name = `worker-${this.opts.index}`
    const address = `ipc://127.0.0.1/${name}.${n}`
    const child = forkWorker(this.opts.nthreads, mallocEnv(this.opts.memoryLimit))
    this.#child = child
    const transport = new ChildTransport<WorkerToScheduler, SchedulerToWorker>(child)
    let handle: WorkerHandle | undefined
    const rpc = new WorkerRpc(address, transport, {
      heartbeat: (m: WorkerMetrics) => handle && this.scheduler.onHeartbeat(handle, m),
      log: (level, message) => this.opts.log?.(level, `${address}: ${message}`),
      // The channel closes just before 'exit' fires: nothing more is sent to
      // the worker, but it is removed with its exit status (a task that
      // called process.exit is then named as such, not as a memory kill),
      // or after a moment without one.
      closed: () => {
        if (!handle) return
        handle.closing = true
        const h = handle
        this.#lostTimer = setTimeout(() => this.scheduler.removeWorker(h, 'its channel closed'), EXIT_WAIT_MS).unref()
      },
      invalid: (e) => this.opts.malformed?.report(String(e.details.field).replace(/\[\d+\]/g, '[]'), `closed the channel to ${address}: it sent a malformed message: ${e.message}`),
    })
    handle = new WorkerHandle(address, name, this.opts.nthreads, this.opts.memoryLimit, rpc)
    handle.pid = child.pid ?? 0
    // Retired: stopped for good, no next incarnation.
    handle.close = () => this.close()
    handle.restart = (why) => {
      this.opts.log?.('warn', `${address}: ${why}`)
      child.kill('SIGKILL')
    }
    let ready = false
    child.once('exit', (code, signal) => this.#onExit(handle!, code, signal, ready))
    const config = workerStart(this.opts.settings, this.scheduler.thresholds, this.opts.secret, {
      address,
      name,
      nthreads: this.opts.nthreads,
      memoryLimit: this.opts.memoryLimit,
      spillDir: this.opts.spillDir,
      dataAddress: `unix:${join(this.opts.socketDir, `${name}.${n}.sock`)}`,
    })
    const started = await rpc.request<{ pid: number; dataAddress: string }>({ op: 'start', config })
    handle.dataAddress = started.dataAddress
    ready = true
    this.#handle = handle
    this.#watchMemory(handle, child)
    this.scheduler.addWorker(handle)
    this.#restarted?.()
    return handle
  }

  #watchMemory(handle: WorkerHandle, child: ChildProcess) {
    clearInterval(this.#watch)
    this.#watch = watchTerminate(child, {
      memoryLimit: this.opts.memoryLimit,
      terminate: () => this.scheduler.thresholds.terminate,
      fallbackRss: () => handle.metrics?.rss,
      alive: () => handle.alive,
      onKill: (why, seen) => {
        this.kills++
        handle.killedFor = seen
        this.opts.log?.('warn', `${handle.address}: ${why}`)
      },
    })
  }

  #onExit(handle: WorkerHandle, code: number | null, signal: NodeJS.Signals | null, ready: boolean) {
    clearInterval(this.#watch)
    clearTimeout(this.#lostTimer)
    this.scheduler.removeWorker(handle, signal ? `killed by ${signal}` : `exited with code ${code}`)
    // The dead incarnation's spill files are useless: its chunks are recomputed.
    void rm(join(this.opts.spillDir, `${handle.name}-${handle.pid}`), { recursive: true, force: true })
    void rm(join(this.opts.socketDir, `${handle.address.slice(handle.address.lastIndexOf('/') + 1)}.sock`), { force: true })
    // One that died while starting is started again by start().
    if (this.#closing || this.scheduler.closed || !ready) return
    const why = signal ? `killed by ${signal}` : `exited with code ${code}`
    const asked = this.#restartAsked
    this.#restartAsked = false
    const delay = asked ? 0 : this.restarts >= MAX_RESTARTS ? 'give-up' : this.#crashes.next(Date.now() - handle.startedAt)
    if (delay === 'give-up') return this.#giveUp(`${handle.name} died ${this.restarts >= MAX_RESTARTS ? `after ${MAX_RESTARTS} restarts` : `${this.#crashes.count} times in a row soon after starting`} (last: ${why}); not starting it again`)
    if (delay > 0) this.opts.log?.('warn', `${handle.name} ${why}; starting it again in ${(delay / 1000).toFixed(1)} s`)
    this.restarts++
    // Not unref'd: a program awaiting a result while its only worker is
    // being replaced has nothing else keeping it alive. close() clears it.
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined
      if (this.#closing || this.scheduler.closed) return
      this.start().catch((e) => this.#giveUp(`restart of ${handle.name} failed: ${e.message}`))
    }, delay)
  }

  /**
   * Kills the worker and starts a fresh one at once (client.restart());
   * resolves once the new one is registered. Calls while one is under way
   * share it: one kill, one wait (no listener per call).
   */
  restartWorker(): Promise<void> {
    if (this.#restarting) return this.#restarting
    const old = this.#handle
    if (this.#closing || this.#gaveUp || !old?.alive || !this.#child) return Promise.resolve()
    this.#restarting = new Promise<void>((resolve) => {
      // Called once the next incarnation registers, or the nanny closes or gives up first.
      this.#restarted = () => {
        this.#restarted = undefined
        this.#restarting = undefined
        resolve()
      }
    })
    old.expectedExit = true
    this.#restartAsked = true
    this.#child.kill('SIGKILL')
    return this.#restarting
  }

  /** Stops for good, saying so: work only this worker could run fails with a coded error. */
  #giveUp(message: string): void {
    this.#gaveUp = true
    this.#restarted?.()
    this.opts.log?.('error', message)
    this.scheduler.workerGone(`worker-${this.opts.index}`)
  }

  /** Asks the worker to close (it removes its files), then makes sure it is gone. */
  async close(timeoutMs = 5000): Promise<void> {
    if (this.#closing) return
    this.#closing = true
    clearInterval(this.#watch)
    clearTimeout(this.#restartTimer)
    this.#restarted?.()
    const child = this.#child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    // A worker still starting (a restart under way) has no channel to be asked on yet.
    if (this.#handle?.alive && this.#handle.pid === child.pid) this.#handle.rpc.request({ op: 'close' }).catch(() => {})
    else child.kill('SIGKILL')
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    await exited
    clearTimeout(timer)
  }

  /** Synchronous last resort on process exit. */
  killNow(): void {
    this.#closing = true
    clearTimeout(this.#restartTimer)
    try {
      this.#child?.kill('SIGKILL')
    } catch {
      /* already gone */
    }
  }
}
