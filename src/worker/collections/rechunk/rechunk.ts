// A rechunk's two task kinds as the worker runs them (Dask's P2P rechunk):
// split cuts an old chunk into the boxes each new chunk needs and pushes
// them to the new chunks' owners; collect places its boxes into the new
// chunk. Bytes only: rows (runs of the last dimensions) are copied between
// raw little-endian chunks, no number is ever serialised.

import { ownTaskError } from '../../../base/errors'
import type { SplitMarker } from '../../../wire/bag'
import { blockBox, blocksOverlapping, boxLen, boxShape, copyBox, intersect, ITEM_BYTES, type Box, type RechunkCollectSpec, type RechunkSplitSpec } from '../../../wire/rechunk'
import { SHARD_PART, type ShuffleService } from '../shuffle/service'

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

/** The box's bytes inside `src` (the region `srcBox`) when they are one run there, else undefined. */
function contiguous(src: Uint8Array, srcBox: Box, box: Box): Buffer | undefined {
  const size = boxShape(box)
  const whole = boxShape(srcBox)
  let first = size.findIndex((n) => n > 1)
  if (first < 0) first = size.length - 1
  for (let d = first + 1; d < size.length; d++) if (size[d] !== whole[d]) return undefined
  let offset = 0
  let stride = ITEM_BYTES
  for (let d = size.length - 1; d >= 0; d--) {
    offset += (box.lo[d] - srcBox.lo[d]) * stride
    stride *= whole[d]
  }
  return Buffer.from(src.buffer, src.byteOffset + offset, boxLen(box) * ITEM_BYTES)
}

function cut(src: Uint8Array, srcBox: Box, box: Box): Buffer {
  const run = contiguous(src, srcBox, box)
  if (run) return run
  const piece = Buffer.allocUnsafe(boxLen(box) * ITEM_BYTES)
  copyBox(src, srcBox, piece, box, box)
  return piece
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
  // Cut lazily: a piece is made when the outgoing cap lets it go.
  function* pieces(): Generator<[number, Buffer[]]> {
    for (const output of blocksOverlapping(shape, to, inBox)) {
      const piece = intersect(inBox, blockBox(shape, to, output))
      yield [output, partBoxes(piece).map((b) => cut(src, inBox, b))]
    }
  }
  return service.sendParts(key, spec.shuffle, spec.input, 0, spec.npartitions, pieces(), owners)
}

export async function runRechunkCollect(service: ShuffleService, spec: RechunkCollectSpec, ...markers: SplitMarker[]): Promise<Float64Array | BigInt64Array> {
  const { shape, from, to } = spec.geometry
  const outBox = blockBox(shape, to, spec.output)
  const len = boxLen(outBox)
  await service.makeRoom(len * ITEM_BYTES)
  // Not from the pool: the result is viewed as 8-byte elements, so it starts on its own aligned buffer.
  const out = Buffer.allocUnsafeSlow(len * ITEM_BYTES)
  const expected = new Set(blocksOverlapping(shape, from, outBox))
  let placed = 0
  const parts = new Map<number, Box[]>()
  await service.readShards(spec.shuffle, spec.output, markers, (m, part, data) => {
    let boxes = parts.get(m.input)
    if (!boxes) parts.set(m.input, (boxes = partBoxes(intersect(blockBox(shape, from, m.input), outBox))))
    const b = boxes[part]
    if (!expected.has(m.input) || boxes.length !== m.parts[spec.output] || data.length !== boxLen(b) * ITEM_BYTES) {
      throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `rechunk ${spec.shuffle} output ${spec.output}: part ${part} from chunk ${m.input} does not fit its box`)
    }
    copyBox(data, b, out, outBox, b)
    placed += boxLen(b)
  })
  // Every element written once: the pieces of the overlapping chunks tile the new one exactly.
  if (placed !== len) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `rechunk ${spec.shuffle} output ${spec.output}: ${placed} of its ${len} values arrived`)
  service.release(spec.shuffle, spec.output, markers)
  return spec.dtype === 'int64' ? new BigInt64Array(out.buffer, out.byteOffset, len) : new Float64Array(out.buffer, out.byteOffset, len)
}
