import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { schedulerWorkers, setupClient, type Client } from 'spillway'

export const GIB = 2 ** 30

/** The recipe's pressure configuration, sized for CI. */
export const PRESSURE = { workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false, silenceLogs: true } as const

export async function cluster(t: { teardown(fn: () => Promise<void> | void): void }, options: Record<string, unknown> = {}) {
  const setup = await setupClient({ ...PRESSURE, ...options } as any)
  t.teardown(async () => {
    await setup.client.close()
    await setup.cluster.close()
  })
  return setup
}

/** Bytes of every file under `dir`, recursively. */
export function bytesOnDisk(dir: string): { bytes: number; files: number } {
  let bytes = 0
  let files = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) {
      const sub = bytesOnDisk(p)
      bytes += sub.bytes
      files += sub.files
    } else if (e.name.endsWith('.spill')) {
      bytes += statSync(p).size
      files++
    }
  }
  return { bytes, files }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 20_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/**
 * One cluster for every test of a file: started before the first test and
 * closed after the last. `use` receives its client.
 */
export function sharedCluster(test: { before(fn: () => Promise<void>): void; after: { always(fn: () => Promise<void>): void } }, use: (client: Client) => void, options: Record<string, unknown> = {}): void {
  let close: (() => Promise<void>) | undefined
  test.before(async () => {
    const r = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 0.5, dashboard: false, silenceLogs: true, ...options } as any)
    use(r.client)
    close = async () => {
      await r.client.close()
      await r.cluster.close()
    }
  })
  test.after.always(async () => close?.())
}

/** The highest rss each worker reported (by name) while `run` ran, sampled every 50 ms from the scheduler's figures. */
export async function peakRss<T>(client: Client, run: () => Promise<T>): Promise<{ value: T; peak: Map<string, number> }> {
  const peak = new Map<string, number>()
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      for (const w of Object.values(await schedulerWorkers(client))) peak.set(w.name, Math.max(peak.get(w.name) ?? 0, (w.metrics as { rss?: number } | undefined)?.rss ?? 0))
      await new Promise((r) => setTimeout(r, 50))
    }
  })()
  try {
    return { value: await run(), peak }
  } finally {
    sampling = false
    await sampler
  }
}
