// A worker's part of the P2P shuffle. As a sender, an input task's shards
// go straight to the worker that owns each output, over the data sockets,
// at most `outgoingCap` bytes in flight. As a receiver, shards land in this
// worker's store (managed memory, spilled like any value) — held back while
// the worker is paused, so senders wait. An output task reads its own
// shards and lets them go; shards for an output already read are dropped.

import { ownTaskError, SpillwayError } from '../../../base/errors'
import type { DataClient } from '../../../comm/data-client'
import { SHARD_KEY, shardKey, type SplitMarker } from '../../../wire/bag'
import type { WorkerStatus } from '../../../wire/protocol'
import type { WorkerStore } from '../../store'
import { BATCH_BYTES, OwnerBatches, parseBatch, type ShardBatch } from './batches'
import { decodeShard } from './shard-codec'
import { Flights } from './flights'
import { refusedByOwner, untilRoom, type RoomHost } from './spill-full'
import { splitParts } from './split-parts'
import { SplitMemory } from './split-bound'

export { SHARD_PART } from './split-parts'

export interface ShuffleHost extends RoomHost {
  readonly store: WorkerStore
  readonly client: DataClient
  readonly memoryLimit: number
  /** This worker's data address: shards for its own outputs are stored without a socket. */
  readonly address: string
  /** Wakes whoever waits on memory (a stored shard may need spilling). */
  checkSoon(): void
  /** Spills managed values until `bytes` more fit under the spill threshold (an output about to be assembled). */
  makeRoom?(bytes: number): Promise<void>
}

export interface ShuffleCounts {
  sentBytes: number
  receivedBytes: number
}

export class ShuffleService {
  readonly counts: ShuffleCounts = { sentBytes: 0, receivedBytes: 0 }
  /** What splits took in memory here, per shuffle: room is made for the next one (split-bound.ts). */
  readonly splitMemory = new SplitMemory()
  /** Outputs already read, per shuffle: a late duplicate shard for one is dropped, not kept forever. */
  readonly #done = new Map<string, Set<number>>()
  /** Runs dropped: a new run of the same shuffle has a new run id, so these never come back. */
  readonly #dropped = new Set<string>()
  /** Shards held, per shuffle, so a shuffle that will not be read is dropped whole. */
  readonly #held = new Map<string, Set<string>>()

  constructor(
    readonly host: ShuffleHost,
    /** Bytes of shards one input task may have in flight at once. */
    readonly outgoingCap: number,
  ) {}

  /** A shard pushed by a peer (or by this worker for its own outputs). */
  async receive(key: string, data: Buffer): Promise<void> {
    const m = SHARD_KEY.exec(key)
    if (!m) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `a peer pushed ${JSON.stringify(key.slice(0, 80))}, which is not a shuffle shard`)
    const [, shuffle, output] = m
    // A late shard of a run that was dropped (an input still running when its shuffle failed) is not kept.
    if (this.#dropped.has(shuffle) || this.#done.get(shuffle)?.has(Number(output)) || this.host.store.has(key)) return
    // A paused worker takes no more: the sender's push waits, which is the backpressure, unless its disk has no room.
    if (!(await untilRoom(this.host, key, data.length, () => this.#dropped.has(shuffle)))) return
    await this.host.store.set(key, data)
    // The run may have been dropped (or this output read) while the shard waited or was stored.
    if (this.#dropped.has(shuffle) || this.#done.get(shuffle)?.has(Number(output))) {
      this.host.store.delete(key)
      return
    }
    let held = this.#held.get(shuffle)
    if (!held) this.#held.set(shuffle, (held = new Set()))
    held.add(key)
    this.counts.receivedBytes += data.length
    this.host.checkSoon()
  }

  /** A batch of shards a peer pushed: checked whole, then each shard stored as it came (or dropped as above). */
  async receiveBatch(shards: unknown, payload: Buffer): Promise<void> {
    for (const [key, data] of parseBatch(shards, payload)) await this.receive(key, data)
  }

  async #pushBatch(owner: string, batch: ShardBatch): Promise<void> {
    if (owner !== this.host.address) return this.host.client.pushBatch(owner, batch.shards, batch.data)
    for (const [i, [key]] of batch.shards.entries()) await this.receive(key, batch.data[i])
  }

  /**
   * Sends an input's items, grouped by output, to the owners of the outputs;
   * the marker says how many parts went to each output.
   */
  send(key: string, shuffle: string, input: number, side: number, byOutput: unknown[][], owners: string[]): Promise<SplitMarker> {
    // Serialized one output at a time, as the sends make room: only what is in flight is held twice.
    function* blobs(): Generator<[number, Buffer[]]> {
      for (let p = 0; p < byOutput.length; p++) {
        if (!byOutput[p].length) continue
        const parts = splitParts(byOutput[p])
        byOutput[p] = []
        yield [p, parts]
      }
    }
    return this.sendParts(key, shuffle, input, side, byOutput.length, blobs(), owners)
  }

  /**
   * Sends an input's shards, each output's as one or more parts (bytes in
   * any layout the output's reader knows), to the owners of the outputs.
   * The parts are taken from `byOutput` only as the outgoing cap allows.
   */
  async sendParts(key: string, shuffle: string, input: number, side: number, npartitions: number, byOutput: Iterable<[number, Buffer[]]>, owners: string[]): Promise<SplitMarker> {
    const parts = new Array<number>(npartitions).fill(0)
    let bytes = 0
    const flights = new Flights((sent) => {
      this.counts.sentBytes += sent
    })
    // Shards wait here until their owner's batch is full; what waits counts against the cap as what is in flight.
    const batches = new OwnerBatches()
    const go = (owner: string) => {
      const batch = batches.take(owner)
      if (batch) flights.add(batch.bytes, this.#pushBatch(owner, batch))
    }
    for (const [p, blobs] of byOutput) {
      parts[p] = blobs.length
      for (const [k, blob] of blobs.entries()) {
        if (this.host.status() === 'paused') await this.#ownRoom(shuffle, shardKey(shuffle, p, input, k), blob.length)
        bytes += blob.length
        while (flights.bytes + batches.pendingBytes > 0 && flights.bytes + batches.pendingBytes + blob.length > this.outgoingCap) {
          const big = batches.largest()
          // Nothing moving, or a batch worth a message waiting: send it; else wait for one in flight.
          if (big && (flights.bytes === 0 || big.bytes >= BATCH_BYTES / 2)) go(big.owner)
          else await flights.one()
          if (flights.failures.length) throw ownerGone(shuffle, flights.failures[0])
        }
        if (flights.failures.length) throw ownerGone(shuffle, flights.failures[0])
        if (batches.add(owners[p], shardKey(shuffle, p, input, k), blob)) go(owners[p])
      }
    }
    for (const owner of batches.owners()) go(owner)
    await flights.all()
    // A push that failed (its owner died): the scheduler runs the input again once the output has a new owner.
    if (flights.failures.length) throw ownerGone(shuffle, flights.failures[0])
    return { key, input, side, parts, bytes }
  }

  /**
   * A sender whose own worker is paused with no spill room fails as a
   * receiver would, before it makes more outgoing shards: they cannot
   * spill. Asked only while paused: the check is not free, and the shards
   * of a rechunk go by in their thousands.
   */
  async #ownRoom(shuffle: string, key: string, bytes: number): Promise<void> {
    await untilRoom(this.host, key, bytes, () => this.#dropped.has(shuffle), 'send')
  }

  /**
   * The items of output `output` from every input that sent it any, in
   * input order, with the side each came from.
   */
  async collect(shuffle: string, output: number, markers: SplitMarker[]): Promise<{ shards: { side: number; items: unknown[] }[]; bytes: number }> {
    const out: { side: number; items: unknown[] }[] = []
    let bytes = 0
    for await (const s of this.shards(shuffle, output, markers)) {
      out.push(s)
      bytes += s.bytes
    }
    return { shards: out, bytes }
  }

  /**
   * The shards of output `output`, in input order, each deserialized only
   * when asked for: a reader that checks its memory as they come stops
   * before the rest are read.
   */
  async *shards(shuffle: string, output: number, markers: SplitMarker[]): AsyncGenerator<{ side: number; items: unknown[]; bytes: number }> {
    for await (const [m, , data] of this.#shardData(shuffle, output, markers)) yield { side: m.side, items: decodeShard(data), bytes: data.length }
  }

  /**
   * Hands each shard of output `output` to `take`, in input order, one at a
   * time; returns their bytes. Missing shards (their holder lost them, or
   * they went to an owner that died) are named by their input tasks, for
   * the scheduler to run those again: all of them, before any is read.
   * The bytes are the stored shards themselves: `take` must not write them.
   */
  async readShards(shuffle: string, output: number, markers: SplitMarker[], take: (m: SplitMarker, part: number, data: Buffer) => void): Promise<number> {
    let total = 0
    for await (const [m, part, data] of this.#shardData(shuffle, output, markers, true)) {
      total += data.length
      take(m, part, data)
    }
    return total
  }

  /**
   * The keys of output `output`'s shards, in input order, once every one is
   * here; else the inputs of those missing are named (see readShards).
   */
  shardKeys(shuffle: string, output: number, markers: SplitMarker[]): [SplitMarker, number, string][] {
    // Being read again (its result was lost): shards sent anew must be taken.
    this.#done.get(shuffle)?.delete(output)
    const sorted = [...markers].sort((a, b) => a.input - b.input)
    const keysOf = (m: SplitMarker) => Array.from({ length: m.parts[output] ?? 0 }, (_, k) => shardKey(shuffle, output, m.input, k))
    const missing = sorted.filter((m) => !keysOf(m).every((k) => this.host.store.has(k))).map((m) => m.key)
    if (missing.length) throw missingShards(shuffle, output, missing)
    return sorted.flatMap((m) => keysOf(m).map((key, part): [SplitMarker, number, string] => [m, part, key]))
  }

  /** Output `output`'s shards one at a time, in input order (a grace collect routes each before it reads the next); the stored bytes, never to be written. */
  shardBytes(shuffle: string, output: number, markers: SplitMarker[]): AsyncGenerator<[SplitMarker, number, Buffer]> {
    return this.#shardData(shuffle, output, markers, true)
  }

  /** `shared`: for a reader that never writes the bytes (the frame kernels), the stored shards themselves, not copies. */
  async *#shardData(shuffle: string, output: number, markers: SplitMarker[], shared = false): AsyncGenerator<[SplitMarker, number, Buffer]> {
    for (const [m, part, key] of this.shardKeys(shuffle, output, markers)) {
      // Peeked: a spilled shard is read once, into this task, not back into managed memory beside its items.
      const data = await (shared ? this.host.store.peekShared(key) : this.host.store.peek(key))
      if (!data) throw missingShards(shuffle, output, [m.key])
      yield [m, part, data]
    }
  }

  /** Room for the items of a split of `shuffle` (as much as the largest one here took), made before it runs. */
  async roomForSplit(shuffle: string): Promise<void> {
    const bytes = this.splitMemory.forSplit(shuffle)
    if (bytes > 0) await this.host.makeRoom?.(bytes)
  }

  /** Room for the items of output `output`, estimated from its shards' bytes, made before they are read. */
  async roomForCollect(shuffle: string, output: number, markers: SplitMarker[]): Promise<void> {
    let encoded = 0
    for (const m of markers) {
      const fed = m.parts.filter((n) => n > 0).length
      if (m.parts[output]) encoded += m.bytes / fed
    }
    await this.host.makeRoom?.(Math.min(this.splitMemory.forCollect(shuffle, encoded), this.host.memoryLimit))
  }

  /** Room for an output of `bytes` and the store's copy of it, made before it is assembled. */
  async makeRoom(bytes: number): Promise<void> {
    await this.host.makeRoom?.(2 * bytes)
  }

  /** The output is read: its shards go, and late duplicates are dropped. */
  release(shuffle: string, output: number, markers: SplitMarker[]): void {
    let done = this.#done.get(shuffle)
    if (!done) this.#done.set(shuffle, (done = new Set()))
    done.add(output)
    const held = this.#held.get(shuffle)
    for (const m of markers) {
      for (let k = 0; k < (m.parts[output] ?? 0); k++) {
        const key = shardKey(shuffle, output, m.input, k)
        this.host.store.delete(key)
        held?.delete(key)
      }
    }
  }

  /** Every shard of `shuffle` held here goes (the scheduler says no output will read them). */
  drop(shuffle: string): number {
    const held = this.#held.get(shuffle)
    this.#held.delete(shuffle)
    this.#done.delete(shuffle)
    this.#dropped.add(shuffle)
    this.splitMemory.drop(shuffle)
    for (const key of held ?? []) this.host.store.delete(key)
    return held?.size ?? 0
  }

  /** Shards held now, over every shuffle. */
  get heldShards(): number {
    let n = 0
    for (const s of this.#held.values()) n += s.size
    return n
  }
}

/**
 * A push that could not reach its owner is no failure of the input's own:
 * it is named as a missing dependency (none to make again), with the
 * owner's address, so the scheduler runs the input again once that owner
 * is gone from its list and the output has a new one. Any other refusal
 * stays the input's failure.
 */
export function ownerGone(shuffle: string, e: unknown): unknown {
  if (!(e instanceof SpillwayError) || e.code !== 'ERR_SPILLWAY_TRANSFER') return refusedByOwner(e)
  const peer = e.details.address
  return ownTaskError('ERR_SPILLWAY_MISSING_DEP', `shuffle ${shuffle}: the owner of an output could not be reached (${e.message})`, { missing: [], peer })
}

export function missingShards(shuffle: string, output: number, missing: string[]): Error {
  return Object.assign(ownTaskError('ERR_SPILLWAY_MISSING_DEP', `shuffle ${shuffle} output ${output}: shards of ${missing.length} input(s) are not here`, { missing }), { missing })
}
