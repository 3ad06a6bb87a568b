// A cluster whose workers are batch jobs (dask-jobqueue's shape): a
// scheduler here, listening where the compute nodes can reach it, and jobs
// that each run `spillway worker` against its scheduler file. `scale(n)`
// submits or cancels jobs, `adapt()` does it from the work waiting, and
// `close()` cancels every job it submitted.

import { levelLog, resolveLogger, type Logger } from '../base/logger'
import { execFile } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { BIN_PATH } from '../base/paths'
import { Client } from '../client/client'
import { nodeAddress, addressOfInterface } from '../comm/interface'
import { LocalCluster } from '../deploy/local-cluster'
import { SpillwayError, ConfigError, type ConfigProblem } from '../base/errors'
import { SetupConfig } from '../config/config'
import { createSpillDir } from '../config/tempdir'
import { resolveJobOptions, type JobQueueOptions, type ResolvedJobOptions } from './options'
import { Adaptive, type AdaptOptions } from './adaptive'
import { assembleScript } from './job-script'

const run = promisify(execFile)

export interface Job {
  id: string
  script: string
  submittedAt: number
  /** Set once one of its workers has joined. */
  startedAt?: number
}

/** What differs between batch systems. */
export interface Flavour {
  name: string
  /** Header directives, without their prefix. */
  directives(o: ResolvedJobOptions, logDirectory: string): string[]
  prefix: string
  submit: { command: string; args: (script: string) => string[] }
  cancel: { command: string; args: (ids: string[]) => string[] }
  /** The job id in the submit command's output. */
  parseJobId(stdout: string): string | undefined
}

export abstract class JobQueueCluster {
  readonly options: ResolvedJobOptions
  readonly logger: Logger
  readonly schedulerFile: string
  readonly jobs = new Map<string, Job>()
  #local: LocalCluster | undefined
  #starting: Promise<LocalCluster> | undefined
  #adaptive: Adaptive | undefined
  #seq = 0
  #closed = false

  protected constructor(
    protected readonly flavour: Flavour,
    options: JobQueueOptions,
    extraKeys: string[],
    extraProblems: ConfigProblem[],
  ) {
    this.options = resolveJobOptions(options, extraKeys, extraProblems, `${flavour.name} options`, () => [process.execPath, BIN_PATH])
    this.options.logDirectory = resolve(this.options.logDirectory)
    this.logger = resolveLogger(options.logger, options.silenceLogs)
    this.schedulerFile = resolve(this.options.schedulerFile ?? join(this.options.logDirectory, `spillway-scheduler-${process.pid}.json`))
  }

  /** The script each job runs, as it will be submitted. Nothing is started. */
  jobScript(): string {
    return assembleScript(this.flavour.prefix, this.flavour.directives(this.options, this.options.logDirectory), this.options, this.schedulerFile)
  }

  /** Workers each job brings. */
  get workersPerJob(): number {
    return this.options.processes
  }

  /** The scheduler, started on first use (scale, adapt, getClient). */
  async start(): Promise<LocalCluster> {
    if (this.#closed) throw new SpillwayError('ERR_SPILLWAY_CLOSED', 'the cluster is closed')
    this.#starting ??= (async () => {
      const config = new SetupConfig({ silenceLogs: true })
      const spill = await createSpillDir(config, { silent: true })
      const host = this.options.interface ? addressOfInterface(this.options.interface) : nodeAddress()
      mkdirSync(this.options.logDirectory, { recursive: true })
      const local = await LocalCluster.start({
        nWorkers: 0,
        threadsPerWorker: 1,
        memoryLimit: this.options.memoryBytes,
        thresholds: { target: config.memoryTarget, spill: config.memorySpill, pause: config.memoryPause, terminate: config.memoryTerminate },
        spillDir: spill.path,
        codec: config.spillCompression,
        listen: `tcp://${host.includes(':') ? `[${host}]` : host}:0`,
        schedulerFile: this.schedulerFile,
        cleanup: () => spill.remove(),
        log: levelLog(this.logger),
      })
      local.scheduler.on('worker-added', (w) => {
        const job = w.jobId ? this.jobs.get(w.jobId) : undefined
        if (job) job.startedAt ??= Date.now()
      })
      this.#local = local
      return local
    })()
    return this.#starting
  }

  /** A client of this cluster. */
  async getClient(): Promise<Client> {
    return new Client(await this.start())
  }

  async #submit(): Promise<Job> {
    const script = join(this.options.logDirectory, `${this.options.jobName}-${process.pid}-${++this.#seq}.sh`)
    writeFileSync(script, this.jobScript(), { mode: 0o700 })
    const { command, args } = this.flavour.submit
    let stdout: string
    try {
      stdout = (await run(command, args(script), { cwd: this.options.logDirectory })).stdout
    } catch (e: any) {
      throw new SpillwayError('ERR_SPILLWAY_JOB_SUBMIT', `${command} failed for ${script}: ${(e.stderr || e.message).trim()}`, { command, script }, { cause: e })
    }
    const id = this.flavour.parseJobId(stdout)
    if (!id) throw new SpillwayError('ERR_SPILLWAY_JOB_SUBMIT', `${command} printed no job id: ${JSON.stringify(stdout.trim())}`, { command, script })
    const job: Job = { id, script, submittedAt: Date.now() }
    this.jobs.set(id, job)
    return job
  }

  async #cancel(ids: string[]): Promise<void> {
    if (ids.length === 0) return
    for (const id of ids) this.jobs.delete(id)
    const { command, args } = this.flavour.cancel
    try {
      await run(command, args(ids))
    } catch (e: any) {
      // A job that already ended cannot be cancelled; that is what we wanted.
      this.logger.warn(`${command} ${ids.join(' ')}: ${(e.stderr || e.message).trim()}`)
    }
  }

  /** The workers of jobs about to be cancelled hand their values to the others first; should they not take them, they are made again. */
  async #retireJobs(ids: string[]): Promise<void> {
    const s = this.#local?.scheduler
    if (!s) return
    const leaving = new Set(ids)
    const workers = [...s.workers.values()].filter((w) => w.jobId !== undefined && leaving.has(w.jobId))
    if (!workers.length) return
    try {
      await s.retireWorkers(workers)
    } catch (e: any) {
      this.logger.warn(`scaling down: ${e.message}; cancelling the job(s) all the same, their values are made again`)
    }
  }

  /** Asks for `n` workers: submits jobs, or cancels the newest (those not yet started first). */
  async scale(n: number): Promise<void> {
    if (!(Number.isInteger(n) && n >= 0)) throw new ConfigError([{ field: 'n', value: n, allowed: 'an integer ≥ 0 (workers)' }], 'scale arguments')
    await this.start()
    const want = Math.ceil(n / this.workersPerJob)
    const have = [...this.jobs.values()]
    if (want > have.length) {
      for (let i = have.length; i < want; i++) await this.#submit()
    } else if (want < have.length) {
      const order = have.sort((a, b) => Number(a.startedAt !== undefined) - Number(b.startedAt !== undefined) || b.submittedAt - a.submittedAt)
      const leaving = order.slice(0, have.length - want).map((j) => j.id)
      await this.#retireJobs(leaving)
      await this.#cancel(leaving)
    }
  }

  /** Scales between `minimum` and `maximum` workers from the work waiting, counting jobs still queued. */
  async adapt(options: AdaptOptions = {}): Promise<void> {
    const local = await this.start()
    this.#adaptive?.stop()
    this.#adaptive = new Adaptive(local.scheduler, options, () => this.jobs.size * this.workersPerJob, (n) => this.scale(n), (m) => this.logger.warn(m))
  }

  /** Cancels every job, then stops the scheduler. Harmless twice. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#adaptive?.stop()
    // The workers first, so they remove their spill files; then whatever is left of the jobs.
    await this.#local?.close()
    await this.#cancel([...this.jobs.keys()])
  }
}
