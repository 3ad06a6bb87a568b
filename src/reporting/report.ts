// cluster_report(): the headline numbers of a run, read from the scheduler.

import type { Client } from '../client/client'
import { schedulerWorkers, workerInMemoryBytes, workerSpillBytes } from './workers'

const GIB = 2 ** 30

export interface ClusterReportData {
  workers: number
  wallTimeSeconds: number
  memoryPerWorkerGib: number
  /** Largest in-memory share of any one worker now (the summary's "mem=…/max"). */
  maxWorkerMemoryGib: number
  /** Highest total in-memory bytes the scheduler saw. */
  peakMemoryGib: number
  /** In-memory bytes now, over all workers. */
  totalMemoryGib: number
  /** Bytes on disk now, after compression, over all workers. */
  totalSpillGib: number
  peakSpillGib: number
  totalTasks: number
  spillCount: number
  lostWorkers: number
  /** P2P shuffle shard bytes the workers took in, over the live workers' lifetimes. */
  shuffleGib: number
}

export class ClusterReport implements ClusterReportData {
  workers!: number
  wallTimeSeconds!: number
  memoryPerWorkerGib!: number
  maxWorkerMemoryGib!: number
  peakMemoryGib!: number
  totalMemoryGib!: number
  totalSpillGib!: number
  peakSpillGib!: number
  totalTasks!: number
  spillCount!: number
  lostWorkers!: number
  shuffleGib!: number

  constructor(data: ClusterReportData) {
    Object.assign(this, data)
  }

  /** e.g. `workers=2 | mem=0.72 GiB/max | spill=1.58 GiB` */
  summaryLine(): string {
    return `workers=${this.workers} | mem=${this.maxWorkerMemoryGib.toFixed(2)} GiB/max | spill=${this.totalSpillGib.toFixed(2)} GiB`
  }

  toJSON(): ClusterReportData {
    return { ...this }
  }
}

export async function clusterReport(client: Client, options: { startTime?: number } = {}): Promise<ClusterReport> {
  const workers = Object.values(await schedulerWorkers(client))
  const s = client.scheduler
  let total = 0
  let max = 0
  let spill = 0
  let spillCount = 0
  let shuffled = 0
  for (const w of workers) {
    const m = workerInMemoryBytes(w.metrics)
    total += m
    max = Math.max(max, m)
    spill += workerSpillBytes(w.metrics)
    spillCount += (w.metrics as { spillCount?: number }).spillCount ?? 0
    shuffled += (w.metrics as { shuffle?: { receivedBytes: number } }).shuffle?.receivedBytes ?? 0
  }
  const start = options.startTime ?? s.startedAt
  return new ClusterReport({
    workers: workers.length,
    wallTimeSeconds: (Date.now() - start) / 1000,
    memoryPerWorkerGib: workers.length ? workers[0].memoryLimit / GIB : 0,
    maxWorkerMemoryGib: max / GIB,
    peakMemoryGib: Math.max(s.peakMemoryBytes, total) / GIB,
    totalMemoryGib: total / GIB,
    totalSpillGib: spill / GIB,
    peakSpillGib: Math.max(s.peakSpillBytes, spill) / GIB,
    totalTasks: s.totalTasks,
    spillCount,
    lostWorkers: s.lostWorkers,
    shuffleGib: shuffled / GIB,
  })
}
