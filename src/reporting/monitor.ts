// monitor_computation(): sample cluster memory and spill while something runs.

import type { Client } from '../client/client'
import { ConfigError, intervalProblem } from '../base/errors'
import { clusterMemorySnapshot } from './workers'
import { stderrLogger } from '../base/logger'

export interface TimelinePoint {
  t: number
  workers: number
  memoryGib: number
  spillGib: number
}

export interface MonitorOptions {
  intervalMs?: number
  /** Logged as "📊 Monitoring: …" with the closing "Time: …" line when given. */
  description?: string
  /** Where those two lines go: the client's logger's info unless told (stderr by default; never stdout). */
  log?: (line: string) => void
}

export interface MonitorResult<T> {
  value: T
  timeline: TimelinePoint[]
  seconds: number
  peakMemoryGib: number
  peakSpillGib: number
  /** `Time: 4.0s | peak memory 1.49 GiB | peak spill 1.70 GiB` */
  summaryLine(): string
}

export async function monitor<T>(client: Client, fn: () => Promise<T> | T, options: MonitorOptions = {}): Promise<MonitorResult<T>> {
  const interval = options.intervalMs ?? 500
  const bad = intervalProblem(interval, 500)
  if (bad) throw new ConfigError([bad], 'monitor options')
  const log = options.log ?? ((l: string) => (client.logger ?? stderrLogger).info(l))
  if (options.description) log(`\n📊 Monitoring: ${options.description}`)
  const timeline: TimelinePoint[] = []
  const start = performance.now()
  const sample = async () => {
    const snap = await clusterMemorySnapshot(client)
    timeline.push({ t: (performance.now() - start) / 1000, ...snap })
  }
  let done = false
  const sampler = (async () => {
    while (!done) {
      await sample()
      if (!done) await new Promise((r) => setTimeout(r, interval))
    }
  })()
  let value: T
  try {
    value = await fn()
  } finally {
    done = true
    await sampler
  }
  await sample()
  const seconds = timeline[timeline.length - 1].t
  const peakMemoryGib = Math.max(...timeline.map((p) => p.memoryGib))
  const peakSpillGib = Math.max(...timeline.map((p) => p.spillGib))
  const summaryLine = () => `Time: ${seconds.toFixed(1)}s | peak memory ${peakMemoryGib.toFixed(2)} GiB | peak spill ${peakSpillGib.toFixed(2)} GiB`
  if (options.description) log(`   ${summaryLine()}`)
  return { value, timeline, seconds, peakMemoryGib, peakSpillGib, summaryLine }
}
