// Grace partitioning of a frame collect (a shuffle groupBy's or join's
// output) whose input would outgrow its worker: instead of handing every
// shard to the core at once, each shard is routed, one at a time, into
// bucket files by other bits of the same key hash (the core's grace.rs),
// and the core then merges or joins bucket by bucket. The files sit in a
// directory of their own beside the worker's spill directory, removed when
// the collect ends, however it ends.

import { mkdtemp, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { native } from '../../../native/binding'
import type { SplitMarker } from '../../../wire/bag'
import type { FrameCollectSpec } from '../../../wire/frame-shuffle'
import type { ShuffleService } from '../shuffle/service'
import { run } from './tasks'

/**
 * Share of the worker's memory limit that a collect's encoded input may
 * reach before it goes through buckets. The plain merge holds the input
 * decoded (about its IPC bytes), the groups' table and states (as much
 * again where keys barely repeat) and the output with its encoding, and a
 * Node worker with the addon already idles near half its limit: past a
 * quarter of the limit, that sum passes the limit.
 */
export const GRACE_SHARE = 0.25
/** Share of the limit one bucket's input aims at: its merge (input, table, output) then takes a fraction of what is left. */
export const BUCKET_SHARE = 1 / 16
const MAX_BITS = 12

export interface GracePlan {
  dir?: string
  bits: number
  /** Decoded bytes of one bucket past which the core routes it again (skew). */
  budget: number
}

/** The collect's encoded input, as the splits' markers tell it (each split's bytes shared among the outputs it fed). */
export function collectInputBytes(markers: SplitMarker[], output: number): number {
  let bytes = 0
  for (const m of markers) {
    const fed = m.parts.filter((n) => n > 0).length
    if (m.parts[output]) bytes += m.bytes / fed
  }
  return bytes
}

/** Buckets for a collect of `input` bytes on a worker of `limit`, or null where the plain merge fits. */
export function gracePlan(spec: FrameCollectSpec, input: number, limit: number): GracePlan | null {
  const kind = spec.then.kind
  const keyed = kind === 'join' || (kind === 'agg' && spec.then.agg.keys.length > 0)
  if (!keyed || !(limit > 0) || !Number.isFinite(limit) || input <= GRACE_SHARE * limit) return null
  const target = BUCKET_SHARE * limit
  const bits = Math.min(MAX_BITS, Math.max(1, Math.ceil(Math.log2(input / target))))
  return { bits, budget: 2 * target }
}

export async function runGraceCollect(service: ShuffleService, spec: FrameCollectSpec, markers: SplitMarker[], grace: GracePlan): Promise<Buffer> {
  await service.host.makeRoom?.(GRACE_SHARE * service.host.memoryLimit)
  // mkdtemp makes the directory 0700; the core makes each bucket file 0600.
  const dir = await mkdtemp(join(dirname(service.host.store.buffer.dir), `grace-${spec.shuffle.slice(0, 16)}-${spec.output}-`))
  try {
    const plan = { ...grace, dir }
    for await (const [m, , data] of service.shardBytes(spec.shuffle, spec.output, markers)) {
      await run(() => native.frameGraceRoute(JSON.stringify({ grace: plan, then: spec.then, side: m.side }), [data]))
    }
    const collect = { then: spec.then, schemas: spec.schemas, sides: spec.schemas.map(() => 0), grace: plan }
    return await run(() => native.frameCollect(JSON.stringify(collect), []))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
