// Before a shuffle starts: the bytes it will hold (its inputs, as planned)
// against what the cluster can hold, memory under the target plus the spill
// disk's free space. Dask's P2P shuffle finds out midway (dask/distributed
// #8674, #8863); this refuses up front, naming both figures.

import { statfsSync } from 'node:fs'
import { serialize } from 'node:v8'
import { SpillwayError } from '../base/errors'
import type { TaskSubmission } from '../scheduler/scheduler'
import type { PartitionSource, SplitSpec } from '../wire/bag'
import type { FrameSplitSpec } from '../wire/frame-shuffle'
import { blockBox, boxLen, ITEM_BYTES, type RechunkSplitSpec } from '../wire/rechunk'

/** What the check needs of the cluster. */
export interface ShuffleCheckHost {
  spillDir: string
  /** Managed memory the workers may hold before they spill (target × limit, summed). */
  memoryBytes: number
  /** Bytes of a task's value, where it is known (persisted partitions). */
  nbytesOf(key: string): number
}

/** Bytes of items as they travel (JSON would throw on a BigInt and drop a Map's entries). */
function serializedBytes(items: unknown[]): number {
  try {
    return serialize(items).length
  } catch {
    return 0
  }
}

function sourceBytes(src: PartitionSource): number {
  if (src.kind === 'text' || src.kind === 'csv') return src.blocks.reduce((a, b) => a + (b.end - b.start), 0)
  if (src.kind === 'parquet') return src.size
  if (src.kind === 'items') return serializedBytes(src.items)
  return 0
}

/** Bytes the shuffles among `subs` will push, as far as their inputs are known. */
export function shuffleBytes(subs: TaskSubmission[], host: ShuffleCheckHost): number {
  let bytes = 0
  for (const s of subs) {
    if (s.task.fn !== 'call' || s.task.func.kind !== 'native') continue
    if (s.task.func.op === 'rechunk.split') {
      // A rechunk pushes every old chunk whole, cut into pieces.
      const { geometry, input } = (s.task.args as unknown[])[0] as RechunkSplitSpec
      bytes += boxLen(blockBox(geometry.shape, geometry.from, input)) * ITEM_BYTES
      continue
    }
    if (s.task.func.op === 'frame.split') {
      // A frame partition sends all its rows: the bytes of the file block it reads, or of its inputs.
      const src = (((s.task.args as unknown[])[0] as FrameSplitSpec).plan.partition.source ?? {}) as { start?: unknown; end?: unknown }
      if (typeof src.start === 'number' && typeof src.end === 'number') bytes += src.end - src.start
      for (const d of s.deps ?? []) bytes += host.nbytesOf(d)
      continue
    }
    if (s.task.func.op !== 'shuffle.split') continue
    const spec = (s.task.args as unknown[])[0] as SplitSpec
    // A reduction combined inside each partition sends its partial, far smaller than its items.
    if (spec.partition.reduce) continue
    bytes += sourceBytes(spec.partition.source)
    for (const d of s.deps ?? []) bytes += host.nbytesOf(d)
  }
  return bytes
}

export function checkShuffleRoom(subs: TaskSubmission[], host: ShuffleCheckHost): void {
  const bytes = shuffleBytes(subs, host)
  if (bytes === 0) return
  let free: number
  try {
    const st = statfsSync(host.spillDir)
    free = st.bavail * st.bsize
  } catch {
    return
  }
  if (bytes <= free + host.memoryBytes) return
  const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB`
  throw new SpillwayError(
    'ERR_SPILLWAY_SPILL_FULL',
    `this shuffle would hold about ${gib(bytes)} (its inputs) but the cluster can hold ${gib(host.memoryBytes)} in memory and ${gib(free)} free on the spill disk ${host.spillDir}: give the spill directory more room (tempBaseDir elsewhere, more jobfs / SLURM --tmp), add workers, or shuffle fewer or smaller items (foldBy and frequencies with splitOut send combined partials)`,
    { shuffleBytes: bytes, freeBytes: free, memoryBytes: host.memoryBytes, spillDir: host.spillDir },
  )
}
