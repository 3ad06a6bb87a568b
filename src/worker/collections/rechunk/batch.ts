// A rechunk's shards as they travel: the pieces an old chunk gives the
// outputs one worker owns go in batches of at most SHARD_PART bytes, cut
// natively straight into the message ([u32 count][count × (u32 output, u32
// part, u32 bytes)][the pieces back to back]), one push per batch. The
// receiver stores each piece as its own shard, so an output reads, and lets
// go of, only its own; nothing is decoded on either side.

import { SpillwayError } from '../../../base/errors'
import { rechunkCut } from '../../../native/chunks'
import { RUN_ID, shardKey, type SplitMarker } from '../../../wire/bag'
import { boxLen, ITEM_BYTES, type Box } from '../../../wire/rechunk'
import { Flights } from '../shuffle/flights'
import { ownerGone, SHARD_PART, type ShuffleService } from '../shuffle/service'

export const BATCH_KEY = /^rechunk-([0-9a-f]{16}(?:e\d{1,6})?)-(\d+)-(\d+)$/

export interface Piece {
  output: number
  part: number
  box: Box
}

interface Batch {
  owner: string
  pieces: Piece[]
  bytes: number
}

const headroom = (n: number) => 4 + 12 * n

/** The pieces grouped by the owner of their output, in batches of at most SHARD_PART bytes (a larger piece alone). */
export function batchesOf(pieces: Piece[], owners: string[]): Batch[] {
  const open = new Map<string, Batch>()
  const out: Batch[] = []
  for (const p of pieces) {
    const owner = owners[p.output]
    const bytes = boxLen(p.box) * ITEM_BYTES
    let b = open.get(owner)
    if (!b || (b.pieces.length && b.bytes + bytes > SHARD_PART)) {
      open.set(owner, (b = { owner, pieces: [], bytes: 0 }))
      out.push(b)
    }
    b.pieces.push(p)
    b.bytes += bytes
  }
  return out
}

/**
 * Cuts and sends an old chunk's pieces, at most `service.outgoingCap` bytes
 * in flight (a batch is cut only when it may go); the marker counts each
 * output's parts, as the bag shuffle's does.
 */
export async function sendBatches(service: ShuffleService, key: string, shuffle: string, input: number, npartitions: number, chunk: Uint8Array, inBox: Box, pieces: Piece[], owners: string[]): Promise<SplitMarker> {
  const parts = new Array<number>(npartitions).fill(0)
  for (const p of pieces) parts[p.output] = Math.max(parts[p.output], p.part + 1)
  const { host, counts } = service
  let bytes = 0
  const flights = new Flights((sent) => {
    counts.sentBytes += sent
  })
  for (const [seq, b] of batchesOf(pieces, owners).entries()) {
    while (flights.bytes > 0 && flights.bytes + b.bytes > service.outgoingCap) await flights.one()
    if (flights.failures.length) throw ownerGone(shuffle, flights.failures[0])
    const data = await rechunkCut(chunk, ITEM_BYTES, inBox, [{ headroom: headroom(b.pieces.length), boxes: b.pieces.map((p) => p.box) }])
    data.writeUInt32LE(b.pieces.length, 0)
    for (const [i, p] of b.pieces.entries()) {
      data.writeUInt32LE(p.output, 4 + 12 * i)
      data.writeUInt32LE(p.part, 8 + 12 * i)
      data.writeUInt32LE(boxLen(p.box) * ITEM_BYTES, 12 + 12 * i)
    }
    bytes += b.bytes
    const batchKey = `rechunk-${shuffle}-${input}-${seq}`
    flights.add(b.bytes, b.owner === host.address ? receiveBatch(service, batchKey, data) : host.client.push(b.owner, batchKey, data))
  }
  await flights.all()
  // A push that failed (its owner died): the scheduler runs the input again once the output has a new owner.
  if (flights.failures.length) throw ownerGone(shuffle, flights.failures[0])
  return { key, input, side: 0, parts, bytes }
}

/** A batch pushed by a peer (or by this worker for its own outputs): each piece stored as its shard. */
export async function receiveBatch(service: ShuffleService, key: string, data: Buffer): Promise<void> {
  const m = BATCH_KEY.exec(key)
  if (!m || !RUN_ID.test(m[1])) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `a peer pushed ${JSON.stringify(key.slice(0, 80))}, which is not a rechunk batch`)
  const [, shuffle, input] = m
  const n = data.length >= 4 ? data.readUInt32LE(0) : -1
  if (n < 0 || data.length < headroom(n)) throw badBatch(key, data.length, 'shorter than its header')
  let at = headroom(n)
  const stores: Promise<void>[] = []
  for (let i = 0; i < n; i++) {
    const [output, part, bytes] = [4, 8, 12].map((o) => data.readUInt32LE(o + 12 * i))
    if (at + bytes > data.length) throw badBatch(key, data.length, `piece ${i} passes its end`)
    stores.push(service.receive(shardKey(shuffle, output, Number(input), part), data.subarray(at, at + bytes)))
    at += bytes
  }
  if (at !== data.length) throw badBatch(key, data.length, `its pieces take ${at}`)
  await Promise.all(stores)
}

function badBatch(key: string, length: number, why: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_PROTOCOL', `rechunk batch ${key} of ${length} bytes is malformed: ${why}`)
}
