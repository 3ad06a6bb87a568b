// The frame shuffle as the worker runs it. A split has the core run its
// partition and cut the rows by output into IPC shards, which go to the
// outputs' owners through the bags' shuffle service (batched per owner,
// stored as they come, never decoded on the way); a collect hands an
// output's shards, each side's in input order, to the core, which
// concatenates, joins or sorts them (through bucket files, grace.ts, where
// they would outgrow the worker). A broadcast join, a sortBy's samples
// and boundaries are plain core calls.

import { ownTaskError } from '../../../base/errors'
import { native } from '../../../native/binding'
import type { SplitMarker } from '../../../wire/bag'
import type { FrameBoundariesPlan, FrameCollectSpec, FrameJoinPlan, FrameSamplePlan, FrameSplitSpec } from '../../../wire/frame-shuffle'
import type { ShuffleService } from '../shuffle/service'
import { collectInputBytes, gracePlan, runGraceCollect } from './grace'
import { ipcOf, run } from './tasks'

/** The core's shards layout: `[count u32][output u32, length u32]…` then the shards back to back. */
export function shardsOf(out: Buffer, npartitions: number): Map<number, Buffer[]> {
  const bad = (why: string) => ownTaskError('ERR_SPILLWAY_PROTOCOL', `a frame split's output ${why}`)
  if (out.length < 4) throw bad(`has ${out.length} bytes`)
  const count = out.readUInt32LE(0)
  let at = 4 + 8 * count
  if (at > out.length) throw bad(`lists ${count} shards in ${out.length} bytes`)
  const byOutput = new Map<number, Buffer[]>()
  for (let s = 0; s < count; s++) {
    const p = out.readUInt32LE(4 + 8 * s)
    const len = out.readUInt32LE(8 + 8 * s)
    if (p >= npartitions || at + len > out.length) throw bad(`gives shard ${s} output ${p} and ${len} bytes, past its ${npartitions} outputs or its ${out.length} bytes`)
    let list = byOutput.get(p)
    if (!list) byOutput.set(p, (list = []))
    list.push(out.subarray(at, at + len))
    at += len
  }
  return byOutput
}

export async function runFrameSplit(service: ShuffleService, key: string, spec: FrameSplitSpec, ...inputs: unknown[]): Promise<SplitMarker> {
  const owners = spec.owners
  if (!owners || owners.length !== spec.npartitions) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `shuffle ${spec.shuffle}: the run of ${key} came without the owners of its ${spec.npartitions} outputs`)
  await service.roomForSplit(spec.shuffle)
  const out = await run(() => native.frameSplit(JSON.stringify(spec.plan), inputs.map(ipcOf)))
  const byOutput = shardsOf(out, spec.npartitions)
  // Shards this worker keeps get their own bytes: a view would hold every other output's bytes alive with it.
  const own = (p: number, parts: Buffer[]) => (owners[p] === service.host.address ? parts.map((b) => Buffer.from(b)) : parts)
  const entries = [...byOutput].sort((a, b) => a[0] - b[0]).map(([p, parts]): [number, Buffer[]] => [p, own(p, parts)])
  const marker = await service.sendParts(key, spec.shuffle, spec.input, spec.side, spec.npartitions, entries, owners)
  service.splitMemory.record(spec.shuffle, out.length, marker.bytes)
  return marker
}

export async function runFrameCollect(service: ShuffleService, spec: FrameCollectSpec, ...markers: SplitMarker[]): Promise<Buffer> {
  const grace = gracePlan(spec, collectInputBytes(markers, spec.output), service.host.memoryLimit)
  if (grace) {
    const out = await runGraceCollect(service, spec, markers, grace)
    service.release(spec.shuffle, spec.output, markers)
    return out
  }
  await service.roomForCollect(spec.shuffle, spec.output, markers)
  const bySide: Buffer[][] = spec.schemas.map(() => [])
  await service.readShards(spec.shuffle, spec.output, markers, (m, _part, data) => {
    const side = bySide[m.side]
    if (!side) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `shuffle ${spec.shuffle}: input ${m.input} sent side ${m.side} of ${bySide.length}`)
    side.push(data)
  })
  const plan = { then: spec.then, schemas: spec.schemas, sides: bySide.map((s) => s.length) }
  const out = await run(() => native.frameCollect(JSON.stringify(plan), bySide.flat()))
  service.release(spec.shuffle, spec.output, markers)
  return out
}

export function runFrameJoin(plan: FrameJoinPlan, ...inputs: unknown[]): Promise<Buffer> {
  return run(() => native.frameBroadcastJoin(JSON.stringify(plan), inputs.map(ipcOf)))
}

export function runFrameSample(plan: FrameSamplePlan, ...inputs: unknown[]): Promise<Buffer> {
  return run(() => native.frameSample(JSON.stringify(plan), inputs.map(ipcOf)))
}

export function runFrameBoundaries(plan: FrameBoundariesPlan, ...inputs: unknown[]): Promise<Buffer> {
  return run(() => native.frameBoundaries(JSON.stringify(plan), inputs.map(ipcOf)))
}
