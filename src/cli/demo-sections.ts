// The sections of `spillway demo`, one function each, in the recipe's order.
// Each prints through `out` (a no-op for --json) and returns its figures.

import type { ChunkedArray } from '../array/array'
import { random } from '../array/random'
import { availableCodecs } from '../native/codecs'
import { SetupConfig, type SetupOptions } from '../config/config'
import { ProgressBar, taskProgress, withProgress } from '../client/progress'
import { clusterReport, type ClusterReportData } from '../reporting/report'
import { monitor, type TimelinePoint } from '../reporting/monitor'
import { clusterMemorySnapshot } from '../reporting/workers'
import { detectResources, type Resources } from '../config/resources'
import { setupClient, type SetupResult } from '../setup'
import { tuneMemoryThresholds, type TuneResult } from '../reporting/tune'
import type { Client } from '../client/client'
import { formatSystemAnalysis } from './info'
import { stderrLogger } from '../base/logger'

const GIB = 2 ** 30

/** The recipe's pressure cluster: 3 GiB capped, 1 GiB reserved, 2 workers of ~1 GiB. */
export const PRESSURE_CONFIG = {
  workloadType: 'cpu',
  maxWorkers: 2,
  maxMemGb: 3,
  reserveMemGb: 1,
  dashboard: false,
} as const satisfies SetupOptions

export interface Workload {
  n: number
  chunk: number
}

export interface DemoSize {
  /** The pressure test and the tuning run: float64 random, n×n. */
  pressure: Workload
  /** The compression comparison: int64 randint(0, 10), n×n. */
  compression: Workload
}

/**
 * Array sizes. The workers hold 2 × 1 GiB and spill past 75% of it, so an
 * array of about 1.5× their memory (20000² float64 = 3.2 GB) spills about
 * half of itself, as in the recipe; `small` (≈1.2×) still spills for tests.
 * The comparison spills compressible integers: it only needs to pass the
 * workers' target, and every codec (zlib is slow) runs it on a fresh cluster.
 */
export const SIZES: Record<'small' | 'medium' | 'full', DemoSize> = {
  small: { pressure: { n: 18_000, chunk: 1_500 }, compression: { n: 15_000, chunk: 1_500 } },
  medium: { pressure: { n: 20_000, chunk: 2_000 }, compression: { n: 15_000, chunk: 1_500 } },
  full: { pressure: { n: 20_000, chunk: 2_000 }, compression: { n: 20_000, chunk: 2_000 } },
}

export type SizeName = keyof typeof SIZES

export interface DemoContext {
  out: (line?: string) => void
  /** Draw progress bars (text mode on a terminal). */
  progress: boolean
  /** setupClient prints its configuration summary (text mode). */
  verbose: boolean
  tempBaseDir?: string
}

function gb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`
}

export function heading(ctx: DemoContext, title: string): void {
  ctx.out('')
  ctx.out(title)
  ctx.out('='.repeat(50))
}

// ── 1. System memory ────────────────────────────────────────────────────────

export async function systemSection(ctx: DemoContext): Promise<Resources> {
  const resources = await detectResources()
  ctx.out('')
  const [title, ...rest] = formatSystemAnalysis(resources)
  ctx.out(`💻 ${title}`)
  for (const l of rest) ctx.out(l.startsWith('HPC ') ? `🖥️  ${l}` : l)
  ctx.out('')
  ctx.out('✅ System analysis complete')
  return resources
}

// ── 2–5. Pressure test, report, timeline ────────────────────────────────────

async function pressureCluster(ctx: DemoContext, extra: SetupOptions = {}): Promise<SetupResult> {
  // The demo's output is its purpose: the configuration summary is part of it (stdout); warnings stay on stderr.
  const logger = { ...stderrLogger, info: (m: string) => ctx.out(m) }
  return setupClient({ ...PRESSURE_CONFIG, silenceLogs: !ctx.verbose, tempBaseDir: ctx.tempBaseDir, ...extra, logger })
}

async function persistAndWait(ctx: DemoContext, client: Client, array: ChunkedArray, label: string): Promise<ChunkedArray> {
  const x = await client.persist(array)
  await withProgress(client, x, () => x.wait(), { label, enabled: ctx.progress })
  return x
}

/** The recipe's make_pressure_computation: persist n×n float64, wait, then its mean. */
async function pressureWorkload(ctx: DemoContext, client: Client, w: Workload, seed: number): Promise<number> {
  const x = await persistAndWait(ctx, client, random.random([w.n, w.n], { chunks: [w.chunk, w.chunk], seed }), 'persist')
  return client.compute(x.mean())
}

export interface PressureFigures {
  config: typeof PRESSURE_CONFIG
  shape: [number, number]
  chunks: [number, number]
  arrayBytes: number
  /** Array bytes over the workers' total memory limit. */
  arrayOverWorkerMemory: number
  workers: number
  memoryLimitBytes: number
  spillDir: string
  seconds: number
  peakMemoryGib: number
  peakSpillGib: number
  mean: number
  summaryLine: string
  timeline: TimelinePoint[]
  report: ClusterReportData & { summaryLine: string }
}

export async function pressureSection(ctx: DemoContext, w: Workload): Promise<PressureFigures> {
  heading(ctx, '🧪 MEMORY PRESSURE TEST')
  ctx.out(`Cap spillway at ${PRESSURE_CONFIG.maxMemGb} GB and reserve ${PRESSURE_CONFIG.reserveMemGb} GB of it: ${PRESSURE_CONFIG.maxWorkers} workers of ~1 GiB each.`)
  const setup = await pressureCluster(ctx)
  const { client, tempDir } = setup
  try {
    const workers = Object.keys(client.nthreads()).length
    const limit = [...client.scheduler.workers.values()][0]?.memoryLimit ?? 0
    ctx.out(`✅ ${workers} workers, ${(limit / GIB).toFixed(2)} GiB limit each`)
    ctx.out(`   Spill directory: ${tempDir}`)
    const arrayBytes = w.n * w.n * 8
    const ratio = arrayBytes / (workers * limit)
    const m = await monitor(client, () => pressureWorkload(ctx, client, w, 1), {
      description: `Persist ${gb(arrayBytes)} on ~${((workers * limit) / GIB).toFixed(0)} GiB of workers (${w.n}×${w.n} float64, chunks ${w.chunk}×${w.chunk})`,
      intervalMs: 250,
      log: (l) => ctx.out(l),
    })
    ctx.out('')
    ctx.out(`✅ Result: ${m.value.toFixed(6)}`)

    heading(ctx, '📋 CLUSTER REPORT')
    const report = await clusterReport(client)
    ctx.out(report.summaryLine())
    ctx.out(`Spilled to disk: ${report.totalSpillGib.toFixed(2)} GiB`)
    return {
      config: PRESSURE_CONFIG,
      shape: [w.n, w.n],
      chunks: [w.chunk, w.chunk],
      arrayBytes,
      arrayOverWorkerMemory: ratio,
      workers,
      memoryLimitBytes: limit,
      spillDir: tempDir,
      seconds: m.seconds,
      peakMemoryGib: m.peakMemoryGib,
      peakSpillGib: m.peakSpillGib,
      mean: m.value,
      summaryLine: m.summaryLine(),
      timeline: m.timeline,
      report: { ...report.toJSON(), summaryLine: report.summaryLine() },
    }
  } finally {
    await setup[Symbol.asyncDispose]()
  }
}

/** The recipe's text fallback of the plot, at most `rows` evenly spaced points. */
export function timelineRows(timeline: TimelinePoint[], rows = 8): string[] {
  const step = Math.max(1, Math.ceil(timeline.length / rows))
  const picked = timeline.filter((_, i) => i % step === 0 || i === timeline.length - 1)
  return picked.map((p) => `${p.t.toFixed(1).padStart(5)}s  memory=${p.memoryGib.toFixed(2)} GiB  spill=${p.spillGib.toFixed(2)} GiB`)
}

export function timelineSection(ctx: DemoContext, timeline: TimelinePoint[], path: string): void {
  heading(ctx, '📈 MEMORY TIMELINE')
  ctx.out('Managed memory plateaus near the workers’ target, while spill keeps growing to absorb the rest.')
  for (const r of timelineRows(timeline)) ctx.out(r)
  ctx.out(`Chart (${timeline.length} samples, in memory and spilled to disk): ${path}`)
}

// ── 6. Compression comparison ───────────────────────────────────────────────

export interface CodecRun {
  codec: string
  seconds: number
  /** Bytes on disk after compression, GiB (the recipe's spill_gib). */
  spillGib: number
  memoryGib: number
  /** The same spilled chunks' size in memory, GiB. */
  spilledMemoryGib: number
  /** spilledMemoryGib / spillGib. */
  ratio: number
  sum: number
  workers: number
}

export interface CompressionFigures {
  available: string[]
  shape: [number, number]
  chunks: [number, number]
  arrayBytes: number
  /** Sorted by time, fastest first. */
  results: CodecRun[]
}

/**
 * Times `work` (only it: the bar reads the scheduler's task records between
 * calls) with a bar of `keys` done, even on a cluster made with silenceLogs.
 */
async function timedWithBar<T>(ctx: DemoContext, client: Client, keys: string[], label: string, work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const bar = new ProgressBar(keys.length, { label, enabled: ctx.progress })
  const seen = new Set<string>()
  const poll = () => {
    const p = taskProgress(client, keys, seen)
    bar.update(p.done, p.spilledBytes)
  }
  const timer = bar.active ? setInterval(poll, 150) : undefined
  try {
    const start = performance.now()
    const value = await work()
    return { value, seconds: (performance.now() - start) / 1000 }
  } finally {
    clearInterval(timer)
    bar.stop()
  }
}

export async function compressionSection(ctx: DemoContext, w: Workload, codecs: string[]): Promise<CompressionFigures> {
  heading(ctx, '🗜️  COMPRESSION COMPARISON')
  const available = availableCodecs()
  ctx.out(`Codecs available here: [${available.map((c) => `'${c}'`).join(', ')}]  ('auto' is lz4, after the byte shuffle for typed values where that pays; each but 'none' also as '+shuffle')`)
  ctx.out(`Each codec spills randint(0, 10) ${w.n}×${w.n} int64 (${gb(w.n * w.n * 8)}, chunks ${w.chunk}×${w.chunk}) on a fresh pressure cluster.`)
  const results: CodecRun[] = []
  for (const [i, codec] of codecs.entries()) {
    // Quiet clusters (a summary per codec would drown the table), each with its own bar.
    const setup = await setupClient({ ...PRESSURE_CONFIG, spillCompression: codec, silenceLogs: true, tempBaseDir: ctx.tempBaseDir })
    try {
      const { client } = setup
      const array = random.randint(0, 10, [w.n, w.n], { chunks: [w.chunk, w.chunk], seed: 2 })
      const { value: sum, seconds } = await timedWithBar(ctx, client, array.keys(), `${codec} (${i + 1}/${codecs.length})`, async () => {
        const x = await client.persist(array)
        await x.wait()
        return client.compute(x.sum())
      })
      const snap = await clusterMemorySnapshot(client)
      let spilledMemory = 0
      for (const wk of client.scheduler.workers.values()) spilledMemory += wk.metrics?.spilledBytes.memory ?? 0
      results.push({
        codec,
        seconds,
        spillGib: snap.spillGib,
        memoryGib: snap.memoryGib,
        spilledMemoryGib: spilledMemory / GIB,
        ratio: snap.spillGib > 0 ? spilledMemory / GIB / snap.spillGib : 0,
        sum,
        workers: snap.workers,
      })
    } finally {
      await setup[Symbol.asyncDispose]()
    }
  }
  results.sort((a, b) => a.seconds - b.seconds)
  ctx.out('')
  ctx.out('The spill column is bytes on disk, after compression.')
  ctx.out(`${'codec'.padEnd(8)}${'time (s)'.padStart(10)}${'spilled to disk (GiB)'.padStart(24)}`)
  ctx.out('-'.repeat(42))
  for (const r of results) ctx.out(`${r.codec.padEnd(8)}${r.seconds.toFixed(1).padStart(10)}${r.spillGib.toFixed(2).padStart(24)}`)
  return { available, shape: [w.n, w.n], chunks: [w.chunk, w.chunk], arrayBytes: w.n * w.n * 8, results }
}

// ── 7. Conservative config ──────────────────────────────────────────────────

export const CONSERVATIVE_FIELDS = ['reserveMemGb', 'memoryTarget', 'memorySpill', 'memoryPause', 'memoryTerminate', 'spillCompression'] as const

export function conservativeSection(ctx: DemoContext): Record<(typeof CONSERVATIVE_FIELDS)[number], unknown> {
  heading(ctx, '🛡️  CONSERVATIVE CONFIG')
  ctx.out("SetupConfig.profile('conservative'): spill early and keep 4 GiB back, for memory-constrained nodes.")
  const c = SetupConfig.profile('conservative')
  const out = {} as Record<(typeof CONSERVATIVE_FIELDS)[number], unknown>
  for (const f of CONSERVATIVE_FIELDS) {
    out[f] = c[f]
    ctx.out(`${f.padEnd(18)} ${String(c[f])}`)
  }
  return out
}

// ── 8. Tuning ───────────────────────────────────────────────────────────────

/** The tuning result as plain figures (its summary as text) plus the workload's mean. */
export type TuningFigures = Pick<TuneResult, 'action' | 'spillGib' | 'spillThresholdGib' | 'before' | 'after' | 'workers'> & {
  mean: number
  summary: string
}

export async function tuningSection(ctx: DemoContext, w: Workload): Promise<TuningFigures> {
  heading(ctx, '🎛️  TUNING THE THRESHOLDS')
  ctx.out('A fresh pressure cluster runs the workload, then tuneMemoryThresholds() reads its spill and moves target / spill.')
  const setup = await pressureCluster(ctx)
  try {
    const mean = await pressureWorkload(ctx, setup.client, w, 3)
    const tuned = await tuneMemoryThresholds(setup.client)
    ctx.out('')
    ctx.out(tuned.summary())
    return {
      mean,
      summary: tuned.summary(),
      action: tuned.action,
      spillGib: tuned.spillGib,
      spillThresholdGib: tuned.spillThresholdGib,
      before: tuned.before,
      after: tuned.after,
      workers: tuned.workers,
    }
  } finally {
    await setup[Symbol.asyncDispose]()
  }
}
