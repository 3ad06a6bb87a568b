// A scheduler in this process and N nannied worker processes.

import { Nanny } from './nanny'
import type { Thresholds } from './protocol'
import { Scheduler } from './scheduler'

export interface LocalClusterOptions {
  nWorkers: number
  threadsPerWorker: number
  memoryLimit: number
  thresholds: Thresholds
  spillDir: string
  codec: string
  level?: number
  processes?: boolean
  heartbeatMs?: number
  /** Called once the workers are stopped, to remove the spill directory. */
  cleanup?: () => Promise<void> | void
  log?: (level: string, message: string) => void
}

const live = new Set<LocalCluster>()
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

  private constructor(readonly options: LocalClusterOptions) {
    this.scheduler = new Scheduler(options.thresholds)
  }

  static async start(options: LocalClusterOptions): Promise<LocalCluster> {
    installExitHook()
    const c = new LocalCluster(options)
    live.add(c)
    for (let i = 0; i < options.nWorkers; i++) {
      c.nannies.push(
        new Nanny(c.scheduler, {
          index: i,
          nthreads: options.threadsPerWorker,
          memoryLimit: options.memoryLimit,
          spillDir: options.spillDir,
          codec: options.codec,
          level: options.level,
          heartbeatMs: options.heartbeatMs,
          log: options.log,
        }),
      )
    }
    try {
      await Promise.all(c.nannies.map((n) => n.start()))
    } catch (e) {
      await c.close()
      throw e
    }
    return c
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
      this.scheduler.close()
      await Promise.all(this.nannies.map((n) => n.close()))
      live.delete(this)
      await this.options.cleanup?.()
    })()
    return this.#closing
  }

  killNow(): void {
    for (const n of this.nannies) n.killNow()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}
