// A worker's values: its SpillBuffer, plus a small-value tier in JS. A tiny
// task result costs more to hand to the native store (a thread-pool hop each
// way) than to compute, and spilling it would save nothing; up to
// `smallLimit` bytes of values under SMALL_VALUE stay here, counted in the
// same managed-memory figures. Everything past that bound is spillable.

import { reduceChunk } from '../native/chunks'
import type { ChunkSpec, ReducePartial, SpillBuffer, SpillMetrics } from '../native/spill-buffer'

export const SMALL_VALUE = 64 * 2 ** 10
/** Share of a worker's memory limit that small values may take in all. */
export const SMALL_SHARE_OF_LIMIT = 0.02

export class WorkerStore {
  readonly #small = new Map<string, Buffer>()
  #smallBytes = 0

  constructor(
    readonly buffer: SpillBuffer,
    private readonly smallLimit: number,
  ) {}

  get target(): number | false {
    return this.buffer.target
  }

  has(key: string): boolean {
    return this.#small.has(key) || this.buffer.has(key)
  }

  #dropSmall(key: string): boolean {
    const old = this.#small.get(key)
    if (!old) return false
    this.#small.delete(key)
    this.#smallBytes -= old.length
    return true
  }

  /** `elementSize`: bytes per element of a typed value (0: unknown), for the spill codec's shuffle. */
  async set(key: string, bytes: Uint8Array, elementSize = 0): Promise<void> {
    this.#dropSmall(key)
    if (bytes.byteLength <= SMALL_VALUE && this.#smallBytes + bytes.byteLength <= this.smallLimit) {
      // A copy: the caller's bytes may be a view into a larger buffer it reuses.
      this.#small.set(key, Buffer.from(bytes))
      this.#smallBytes += bytes.byteLength
      if (this.buffer.has(key)) this.buffer.delete(key)
      return
    }
    await this.buffer.set(key, bytes, elementSize)
  }

  /** The value's bytes, the caller's own to keep or change. */
  async get(key: string): Promise<Buffer | undefined> {
    const s = this.#small.get(key)
    return s ? Buffer.from(s) : this.buffer.get(key)
  }

  /** Like get, but a spilled value is read without coming back into memory (nothing else is pushed out for it). */
  async peek(key: string): Promise<Buffer | undefined> {
    const s = this.#small.get(key)
    return s ? Buffer.from(s) : this.buffer.peek(key)
  }

  /** Like peek, but the stored bytes themselves, for a reader that never writes them (a frame kernel's input). */
  async peekShared(key: string): Promise<Buffer | undefined> {
    return this.#small.get(key) ?? this.buffer.peekShared(key)
  }

  /** A rechunk's new chunk made from pieces held here (see SpillBuffer.assemble); small ones go in as their bytes. */
  assemble(out: { lo: number[]; hi: number[] }, itemSize: number, pieces: { lo: number[]; hi: number[]; key: string }[]): Promise<Buffer | undefined> {
    return this.buffer.assemble(
      out,
      itemSize,
      pieces.map((p) => ({ ...p, data: this.#small.get(p.key) })),
    )
  }

  /** For a transfer: a spilled value as its compressed frame, else its bytes (the held ones: never to be written). */
  async getFrame(key: string): Promise<{ compressed: boolean; data: Buffer } | undefined> {
    const s = this.#small.get(key)
    return s ? { compressed: false, data: s } : this.buffer.getFrameShared(key)
  }

  /** A spilled value that came as its frame: onto the spill disk as it is. */
  setFrame(key: string, frame: Buffer): Promise<number> {
    this.#dropSmall(key)
    return this.buffer.setFrame(key, frame)
  }

  delete(key: string): boolean {
    return this.#dropSmall(key) || this.buffer.delete(key)
  }

  generate(key: string, spec: ChunkSpec): Promise<number> {
    this.#dropSmall(key)
    return this.buffer.generate(key, spec)
  }

  async reduce(key: string, dtype: string, op: string): Promise<ReducePartial | null> {
    const s = this.#small.get(key)
    return s ? reduceChunk(s, dtype, op) : this.buffer.reduce(key, dtype, op)
  }

  metrics(): SpillMetrics {
    const m = this.buffer.metrics()
    return { ...m, managedBytes: m.managedBytes + this.#smallBytes, memoryBytes: m.memoryBytes + this.#smallBytes, memoryCount: m.memoryCount + this.#small.size }
  }

  /** Managed bytes in memory that spilling could write out (small values stay). */
  spillable(m: SpillMetrics): number {
    return Math.max(0, m.memoryBytes - this.#smallBytes)
  }

  get dir(): string {
    return this.buffer.dir
  }

  retrySpillNow(): void {
    this.buffer.retrySpillNow()
  }

  /** Spills until at most `bytes` of managed values stay in memory (small ones count, but stay). */
  evictUntil(bytes: number): Promise<number> {
    return this.buffer.evictUntil(Math.max(0, bytes - this.#smallBytes))
  }

  setTarget(fraction: number | false): Promise<void> {
    return this.buffer.setTarget(fraction)
  }

  async close(): Promise<void> {
    this.#small.clear()
    this.#smallBytes = 0
    await this.buffer.close()
  }
}
