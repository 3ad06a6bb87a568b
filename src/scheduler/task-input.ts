// What a task reads, in words, for an error about the task as a whole (a
// KilledWorkerError): the file and byte range, the shuffle output, the
// array chunk, or the inputs and their sizes. A user who is told only a
// task's key cannot tell which of their files or keys killed the workers.

import type { PartitionSource, PartitionSpec, SplitSpec } from '../wire/bag'
import type { TaskFn } from '../wire/protocol'
import type { RechunkCollectSpec, RechunkSplitSpec } from '../wire/rechunk'
import { ITEM_BYTES } from '../wire/rechunk'
import { KilledWorkerError } from '../base/errors'
import type { TaskRecord, WorkerHandle } from './state'

export function bytesText(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${n} bytes`
}

function sourceText(src: PartitionSource): string | undefined {
  if (src.kind === 'text' || src.kind === 'csv') {
    const shown = src.blocks.slice(0, 3).map((b) => `${b.path} bytes ${b.start}-${b.end} (${bytesText(b.end - b.start)}${'compression' in src && src.compression ? `, ${src.compression}, decompressed size unknown` : ''})`)
    const more = src.blocks.length > 3 ? ` and ${src.blocks.length - 3} more blocks` : ''
    return `${src.kind === 'csv' ? 'CSV ' : ''}file ${shown.join(', ')}${more}`
  }
  if (src.kind === 'parquet') return `Parquet file ${src.path} rows ${src.rowStart}-${src.rowEnd}`
  if (src.kind === 'items') return `${src.items.length} items given in the graph`
  if (src.kind === 'shuffle') {
    const c = src.collect
    return `output ${c.output} of ${c.npartitions} of shuffle ${c.shuffle} (${c.then.kind === 'join' ? 'a join' : c.then.kind === 'groups' ? 'a groupBy' : c.then.kind === 'sorted' ? 'a sortBy' : c.then.kind})`
  }
  return undefined
}

function boxBytes(geometry: { shape: number[]; to: number[] }): number {
  return geometry.to.reduce((a, c, d) => a * Math.min(c, geometry.shape[d]), ITEM_BYTES)
}

function callText(task: Extract<TaskFn, { fn: 'call' }>): string | undefined {
  if (task.func.kind !== 'native') return `a call of ${task.func.label || 'a function'}`
  const spec = (task.args as unknown[])[0]
  switch (task.func.op) {
    case 'bag.partition':
      return sourceText((spec as PartitionSpec).source)
    case 'shuffle.split': {
      const s = spec as SplitSpec
      const src = sourceText(s.partition.source)
      return `input ${s.input} of shuffle ${s.shuffle}${src ? `: ${src}` : ''}`
    }
    case 'rechunk.split': {
      const s = spec as RechunkSplitSpec
      return `old chunk ${s.input} of a rechunk of shape [${s.geometry.shape}] from chunks [${s.geometry.from}] to [${s.geometry.to}]`
    }
    case 'rechunk.collect': {
      const s = spec as RechunkCollectSpec
      return `new chunk ${s.output} (up to ${bytesText(boxBytes(s.geometry))}) of a rechunk of shape [${s.geometry.shape}] to chunks [${s.geometry.to}]`
    }
    default:
      return `a ${task.func.op} task`
  }
}

/** What `t` read: its source, and its inputs with their sizes where known. */
export function describeInput(t: TaskRecord): string {
  const parts: string[] = []
  const task = t.task
  if (task?.fn === 'chunk') parts.push(`a generated chunk of ${task.spec.len} elements (${bytesText(task.spec.len * ITEM_BYTES)})`)
  else if (task?.fn === 'call') {
    const c = callText(task)
    if (c) parts.push(c)
  }
  // A shuffle's or rechunk's output reads markers (a few bytes each): their count says nothing of its size.
  const readsMarkers = task?.fn === 'call' && task.func.kind === 'native' && (task.func.op === 'rechunk.collect' || ((task.args as unknown[])[0] as PartitionSpec)?.source?.kind === 'shuffle')
  if (t.deps.length && !readsMarkers) {
    const bytes = t.deps.reduce((a, d) => a + d.nbytes, 0)
    const named = t.deps.slice(0, 3).map((d) => JSON.stringify(d.key)).join(', ')
    parts.push(`${t.deps.length} input${t.deps.length === 1 ? '' : 's'} (${named}${t.deps.length > 3 ? ', …' : ''}) of ${bytesText(bytes)} together`)
  }
  return parts.join('; ') || 'nothing but its own arguments'
}

/** The error of a task that killed ALLOWED_KILLS workers: what it read and the last one's memory. */
export function killedWorker(t: TaskRecord, w: WorkerHandle, reason: string): KilledWorkerError {
  return new KilledWorkerError(t.key, t.suspicious, w.address, reason, {
    input: describeInput(t),
    memoryLimit: w.memoryLimit,
    killedAtRss: w.killedFor?.rss,
    terminate: w.killedFor?.terminate,
    lastRss: w.metrics?.rss,
  })
}
