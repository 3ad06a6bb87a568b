// A scheduler in this process and N nannied worker processes.

import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TlsFiles } from '../comm/address'
import { Nanny } from './nanny'
import { RemoteWorkers } from './remote/listener'
import { removeSchedulerFile, writeSchedulerFile } from '../comm/scheduler-file'
import { clusterSettings, type ClusterSettings } from './worker-settings'
import { VERSION } from '../base/version'
import { formatBytes } from '../base/units'
import { ArgumentError, SpillwayError } from '../base/errors'
import { SummaryLog } from '../base/log-summary'
import { levelLog, resolveLogger, type Logger } from '../base/logger'
import type { Thresholds } from '../wire/protocol'
import { defaultThresholds } from '../config/options'
import { ScatterBackup } from '../scheduler/scatter-backup'
import { Scheduler } from '../scheduler/scheduler'
import { TaskClients } from '../scheduler/task-clients'

export interface LocalClusterOptions {
  nWorkers: number
  threadsPerWorker: number
  memoryLimit: number
  thresholds: Thresholds
  spillDir: string
  codec: string
  level?: number
  /** Bytes each worker's spill files may take on disk (Dask's max-spill); undefined: no cap. */
  maxSpill?: number
  processes?: boolean
  heartbeatMs?: number
  /** A paused worker that cannot spill and makes no progress this long is stuck, and the work it holds up fails (default 30 s). */
  stuckTimeoutMs?: number
  /**
   * tcp://host:port where workers started elsewhere (`spillway worker`)
   * join, proving they hold the cluster's secret; port 0 picks one.
   */
  listen?: string
  /** A worker paused by memory it cannot spill this long is retired and restarted (default 60 s; scheduler/paused-restart.ts). */
  pausedRestartMs?: number
  /** A running task whose key no one holds any more that has not stopped this long has its worker restarted (default 60 s; scheduler/watchdog.ts). */
  releasedGraceMs?: number
  /** How long a task module may take to import on a worker before the tasks that need it fail (default 60 s). */
  importTimeoutMs?: number
  /** A worker from elsewhere silent this long is taken as lost (default 300 s). */
  workerTtlMs?: number
  /** Certificate, key (and CA) files for a tls:// `listen` address. */
  tls?: TlsFiles
  /** Where to write the scheduler file (and its secret, FILE.secret) for them; removed on close. */
  schedulerFile?: string
  /** Called once the workers are stopped, to remove the spill directory. */
  cleanup?: () => Promise<void> | void
  /** Where the cluster's messages go (console's or pino's shape); default: stderr. */
  logger?: Logger
  /** (level, message) instead of a logger; spillway's own callers pass one. */
  log?: (level: string, message: string) => void
}

const live = new Set<LocalCluster>()

// sun_path holds 108 bytes on Linux (104 on macOS), name and NUL included.
const MAX_SOCKET_DIR = 80

/** Where the workers' data sockets go: the spill directory, or a short private one when its path is too long for a socket. */
async function socketDirFor(spillDir: string): Promise<{ dir: string; remove?: () => Promise<void> }> {
  if (spillDir.length <= MAX_SOCKET_DIR) return { dir: spillDir }
  const dir = await mkdtemp(join(tmpdir(), 'spillway-sock-'))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}
let exitHookInstalled = false

function installExitHook() {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // Workers also exit when their IPC channel closes; this covers the
  // synchronous paths (process.exit) where that happens a little later.
  process.on('exit', () => {
    for (const c of live) c.killNow()
  })
}

export class LocalCluster {
  readonly scheduler: Scheduler
  readonly nannies: Nanny[] = []
  #closing: Promise<void> | undefined
  readonly #onClose: (() => Promise<void> | void)[] = []
  /** Hex of the secret the workers' data connections prove they hold. */
  secret = ''
  /** The listener for workers started elsewhere, when `listen` was given. */
  remote: RemoteWorkers | undefined

  /** What every worker of this cluster starts with, local or joined. */
  readonly settings: ClusterSettings
  /** Links closed for a malformed message (`total`), logged one summary line per interval. */
  readonly malformed: SummaryLog
  /** What tasks on the workers submit (getClient()), held per run. */
  readonly taskClients: TaskClients

  private constructor(readonly options: LocalClusterOptions) {
    this.scheduler = new Scheduler(options.thresholds)
    this.taskClients = new TaskClients(this.scheduler)
    if (options.pausedRestartMs !== undefined) this.scheduler.pausedRestartMs = options.pausedRestartMs
    if (options.releasedGraceMs !== undefined) this.scheduler.releasedGraceMs = options.releasedGraceMs
    this.settings = clusterSettings(options)
    this.malformed = new SummaryLog(options.log, 'links closed for malformed messages')
  }

  /** `thresholds` left out: the options' defaults (a cluster without them would hold NaN bytes under its target). */
  static async start(given: Omit<LocalClusterOptions, 'thresholds'> & { thresholds?: Thresholds }): Promise<LocalCluster> {
    // The one option with no default: where spilled values, sockets and scattered copies live.
    if (typeof given?.spillDir !== 'string' || given.spillDir === '') throw new ArgumentError([{ field: 'spillDir', value: given?.spillDir, allowed: 'a directory path for spilled data (setupClient makes one for you)' }], 'LocalCluster.start')
    const options: LocalClusterOptions = { ...given, thresholds: given.thresholds ?? defaultThresholds(), log: given.log ?? levelLog(resolveLogger(given.logger)) }
    installExitHook()
    const c = new LocalCluster(options)
    live.add(c)
    // Data connections between workers prove they hold this secret before anything is read.
    const secret = randomBytes(32).toString('hex')
    const sockets = await socketDirFor(options.spillDir)
    if (sockets.remove) c.#onClose.push(sockets.remove)
    c.scheduler.backup = new ScatterBackup(join(options.spillDir, 'scattered'), undefined, options.codec)
    c.secret = secret
    c.#logHealth()
    for (let i = 0; i < options.nWorkers; i++) {
      c.nannies.push(
        new Nanny(c.scheduler, {
          index: i,
          nthreads: options.threadsPerWorker,
          memoryLimit: options.memoryLimit,
          spillDir: options.spillDir,
          settings: c.settings,
          log: options.log,
          malformed: c.malformed,
          secret,
          socketDir: sockets.dir,
        }),
      )
    }
    try {
      if (options.listen) await c.#listen(options.listen, Buffer.from(secret, 'hex'))
      await Promise.all(c.nannies.map((n) => n.start()))
    } catch (e) {
      await c.close()
      throw e
    }
    return c
  }

  /** Says when a worker stops answering, and when it answers again. */
  #logHealth(): void {
    const log = this.options.log
    if (!log) return
    this.scheduler.on('worker-added', (w) => log('debug', `worker ${w.address} (${w.name}) added: ${w.nthreads} thread(s), ${formatBytes(w.memoryLimit)} limit`))
    this.scheduler.on('worker-removed', (w, why) => log('debug', `worker ${w.address} (${w.name}) removed: ${why}`))
    this.scheduler.on('worker-unresponsive', (w, ms) => log('warn', `worker ${w.address} (${w.name}) has not answered for ${ms / 1000} s (is a task blocking its event loop?): marked unresponsive, no new work goes to it and the work it has not started moves to other workers`))
    this.scheduler.on('worker-responsive', (w) => log('info', `worker ${w.address} (${w.name}) answers again`))
    this.scheduler.on('worker-retiring', (w, why) => log('info', `worker ${w.address} (${w.name}) retires (${why}): moving its values to the other workers`))
    this.scheduler.on('worker-retired', (w, r) => log('info', `worker ${w.address} (${w.name}) retired: ${r.moved} value(s) moved (${formatBytes(r.movedBytes)}), ${r.handedOver} already held elsewhere, ${r.recomputed} to make again, in ${r.seconds.toFixed(1)} s`))
    this.scheduler.on('worker-paused-restart', (w, s) => log('warn', `worker ${w.address} (${w.name}) has been paused for ${Math.round(s)} s by memory spillway cannot spill (unmanaged): moving its values to the other workers and restarting it`))
    this.scheduler.on('worker-retire-failed', (w, e) => log('warn', `${e.message}; closing it all the same, its values are made again`))
  }

  async #listen(address: string, secret: Buffer): Promise<void> {
    const o = this.options
    this.remote = await RemoteWorkers.start(this.scheduler, {
      address,
      secret,
      tls: o.tls,
      settings: this.settings,
      log: o.log,
      malformed: this.malformed,
    })
    if (o.schedulerFile) {
      writeSchedulerFile(o.schedulerFile, { address: this.remote.address, version: VERSION, jobId: process.env.SLURM_JOB_ID ?? process.env.PBS_JOBID, pid: process.pid }, secret)
    }
  }

  /**
   * Lets the workers that joined from elsewhere go: no new ones are taken,
   * the scheduler file goes first (their nannies then know the cluster is
   * gone, not lost), and each is asked to close, removing its spill files.
   */
  async #releaseRemote(): Promise<void> {
    if (!this.remote) return
    this.remote.stopAccepting()
    if (this.options.schedulerFile) removeSchedulerFile(this.options.schedulerFile)
    const local = new Set(this.nannies.map((n) => n.worker))
    const remote = [...this.scheduler.workers.values()].filter((w) => !local.has(w))
    await Promise.allSettled(remote.map((w) => Promise.race([w.rpc.request({ op: 'close' }), new Promise((r) => setTimeout(r, 5000).unref())])))
    this.remote.close()
  }

  get spillDir(): string {
    return this.options.spillDir
  }

  get closed(): boolean {
    return this.#closing !== undefined
  }

  /** Addresses of the live workers. */
  workers(): string[] {
    return [...this.scheduler.workers.keys()]
  }

  /** Runs `fn` first when the cluster closes (the dashboard stops with it). */
  onClose(fn: () => Promise<void> | void): void {
    this.#onClose.push(fn)
  }

  /** Stops every worker and removes the spill directory. Harmless twice. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled(this.#onClose.map(async (fn) => fn()))
      await this.#releaseRemote()
      this.scheduler.close()
      await Promise.all([...this.nannies.map((n) => n.close()), this.scheduler.backup?.close()])
      this.malformed.flush()
      live.delete(this)
      await this.options.cleanup?.()
    })()
    return this.#closing
  }

  /**
   * Every worker killed and started afresh (client.restart()): local ones by
   * their nannies, joined ones by dropping their connection (their nannies
   * start the next). Resolves once as many workers as before are back, or
   * rejects with ERR_SPILLWAY_TIMEOUT after `timeoutMs`.
   */
  async restartWorkers(timeoutMs = 60_000): Promise<void> {
    const before = this.scheduler.workers.size
    const local = new Set(this.nannies.map((n) => n.worker))
    for (const w of this.scheduler.workers.values()) {
      w.expectedExit = true
      if (!local.has(w)) w.restart?.('restarted by client.restart()')
    }
    const back = Promise.all(this.nannies.map((n) => n.restartWorker())).then(async () => {
      while (this.scheduler.workers.size < before && !this.closed) await new Promise((r) => setTimeout(r, 50))
    })
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SpillwayError('ERR_SPILLWAY_TIMEOUT', `client.restart(): ${this.scheduler.workers.size} of ${before} workers back after ${timeoutMs / 1000} s`, { workers: this.scheduler.workers.size, expected: before, timeoutMs })), timeoutMs)
    })
    try {
      await Promise.race([back, late])
    } finally {
      clearTimeout(timer)
    }
  }

  killNow(): void {
    for (const n of this.nannies) n.killNow()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}
