// A rechunk's two task kinds as the worker runs them (Dask's P2P rechunk):
// split cuts an old chunk into the boxes each new chunk needs, in the core,
// straight into one batch per owner of new chunks (batch.ts); collect has
// the core assemble its new chunk from the pieces where the store holds
// them. Bytes only: no number is ever serialised, no piece is copied in JS.

import { ownTaskError } from '../../../base/errors'
import type { SplitMarker } from '../../../wire/bag'
import { blockBox, blocksOverlapping, boxLen, boxShape, intersect, ITEM_BYTES, type Box, type RechunkCollectSpec, type RechunkSplitSpec } from '../../../wire/rechunk'
import { missingShards, SHARD_PART, type ShuffleService } from '../shuffle/service'
import { sendBatches, type Piece } from './batch'

/** A box cut into boxes of at most SHARD_PART bytes along its outer dimensions, in order; both sides cut it alike. */
export function partBoxes(box: Box): Box[] {
  if (boxLen(box) * ITEM_BYTES <= SHARD_PART) return [box]
  const size = boxShape(box)
  const d = size.findIndex((n) => n > 1)
  let inner = ITEM_BYTES
  for (let e = d + 1; e < size.length; e++) inner *= size[e]
  const per = Math.max(1, Math.floor(SHARD_PART / inner))
  const out: Box[] = []
  for (let a = box.lo[d]; a < box.hi[d]; a += per) {
    const lo = box.lo.slice()
    const hi = box.hi.slice()
    lo[d] = a
    hi[d] = Math.min(a + per, box.hi[d])
    out.push(...partBoxes({ lo, hi }))
  }
  return out
}

function bytesOf(v: unknown): Uint8Array {
  if (!ArrayBuffer.isView(v)) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `a rechunk split got ${typeof v} where a chunk's raw values belong`)
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
}

export async function runRechunkSplit(service: ShuffleService, key: string, spec: RechunkSplitSpec, chunk: unknown): Promise<SplitMarker> {
  const { shape, from, to } = spec.geometry
  const owners = spec.owners
  if (!owners || owners.length !== spec.npartitions) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `rechunk ${spec.shuffle}: the run of ${key} came without the owners of its ${spec.npartitions} outputs`)
  const src = bytesOf(chunk)
  const inBox = blockBox(shape, from, spec.input)
  if (src.byteLength !== boxLen(inBox) * ITEM_BYTES) {
    throw ownTaskError('ERR_SPILLWAY_CORRUPT_VALUE', `rechunk ${spec.shuffle}: chunk ${spec.input} has ${src.byteLength} bytes, its shape [${boxShape(inBox)}] needs ${boxLen(inBox) * ITEM_BYTES}`)
  }
  const pieces: Piece[] = blocksOverlapping(shape, to, inBox).flatMap((output) => partBoxes(intersect(inBox, blockBox(shape, to, output))).map((box, part) => ({ output, part, box })))
  return sendBatches(service, key, spec.shuffle, spec.input, spec.npartitions, src, inBox, pieces, owners)
}

export async function runRechunkCollect(service: ShuffleService, spec: RechunkCollectSpec, ...markers: SplitMarker[]): Promise<Float64Array | BigInt64Array> {
  const { shape, from, to } = spec.geometry
  const outBox = blockBox(shape, to, spec.output)
  const len = boxLen(outBox)
  const expected = new Set(blocksOverlapping(shape, from, outBox))
  const keys = service.shardKeys(spec.shuffle, spec.output, markers)
  const boxes = new Map<number, Box[]>()
  let placed = 0
  const pieces = keys.map(([m, part, key]) => {
    let b = boxes.get(m.input)
    if (!b) boxes.set(m.input, (b = partBoxes(intersect(blockBox(shape, from, m.input), outBox))))
    if (!expected.has(m.input) || b.length !== m.parts[spec.output]) {
      throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `rechunk ${spec.shuffle} output ${spec.output}: chunk ${m.input} sent ${m.parts[spec.output]} parts where its box has ${b.length}`)
    }
    placed += boxLen(b[part])
    return { ...b[part], key }
  })
  // Every element written once: the pieces of the overlapping chunks tile the new one exactly.
  if (placed !== len) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `rechunk ${spec.shuffle} output ${spec.output}: ${placed} of its ${len} values arrived`)
  await service.makeRoom(len * ITEM_BYTES)
  // Assembled in the core from the pieces where they lie; a piece whose length does not fit its box is refused there.
  let out = await service.host.store.assemble(outBox, ITEM_BYTES, pieces)
  if (!out) throw missingShards(spec.shuffle, spec.output, [...new Set(keys.filter(([, , k]) => !service.host.store.has(k)).map(([m]) => m.key))])
  // Viewed as 8-byte elements: a buffer that does not start on one is copied onto its own.
  if (out.byteOffset % ITEM_BYTES) {
    const aligned = Buffer.allocUnsafeSlow(out.length)
    out.copy(aligned)
    out = aligned
  }
  service.release(spec.shuffle, spec.output, markers)
  return spec.dtype === 'int64' ? new BigInt64Array(out.buffer, out.byteOffset, len) : new Float64Array(out.buffer, out.byteOffset, len)
}
