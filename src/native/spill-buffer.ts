import { elementSizeOf, validCodecNames, toBuffer } from './codecs'
import { checkReduce, checkSpec } from './chunks'
import { callNative, callNativeSync, ConfigError, type ConfigProblem } from '../base/errors'
import { native, type Binding } from './binding'
import { parseBytes } from '../base/units'

export interface SpillBufferOptions {
  /** Directory for spill files; created with mode 0700. */
  dir: string
  /** Bytes this buffer may hold in memory (the worker's memory limit). */
  memoryLimit: number
  /**
   * Fraction of `memoryLimit` above which LRU chunks spill. Default 0.75.
   * `false`: managed memory never spills by itself; only `evictUntil` does
   * (Dask's `target: False`).
   */
  target?: number | false
  /** Spill codec; 'auto' is lz4, with the byte shuffle for TypedArrays whose sample it shrinks more. */
  codec?: string
  /** Codec level (zstd 1–19, zlib 1–9). */
  level?: number
  /**
   * Bytes the spill files may take on disk, after compression, as a number
   * or a size ('10 GiB'); `false` (the default): no cap. A chunk whose frame
   * would pass it stays in memory (Dask's `max-spill`).
   */
  maxSpill?: number | string | false
}

export interface SpilledBytes {
  /** In-memory size of the spilled chunks. */
  memory: number
  /** Bytes they take on disk, after compression. */
  disk: number
}

/** A SpillBuffer's figures, named after Dask's worker heartbeat metrics. */
export interface SpillMetrics {
  /** Every chunk held, in memory or spilled (Dask's managed_bytes). */
  managedBytes: number
  /** Chunks held in memory. */
  memoryBytes: number
  spilledBytes: SpilledBytes
  memoryCount: number
  diskCount: number
  spillCount: number
  unspillCount: number
  spillBytesWritten: number
  spillSeconds: number
  unspillBytesRead: number
  unspillSeconds: number
  /** Every spill write that failed (the chunk stayed in memory). */
  writeFailures: number
  lastWriteError?: string
  /** The last failed write wanted space the disk or quota did not have. */
  lastWriteNoSpace: boolean
  /** Failed writes since the last one that landed. */
  consecutiveWriteFailures: number
  /** Seconds until the next spill write is tried: writes back off after a failure. */
  spillBackoffSeconds: number
  /** Absent while the target is off. */
  targetBytes?: number
  memoryLimit: number
  /** Spill writes the `maxSpill` cap refused; those values stayed in memory. */
  spillCapRefusals: number
  /** The spill disk is at its `maxSpill` cap: nothing more spills until disk bytes fall. */
  spillCapReached: boolean
}

export type ChunkSpec = Binding.JsChunkSpec
export type ReducePartial = Binding.JsPartial

const OPTIONS = new Set(['dir', 'memoryLimit', 'target', 'codec', 'level', 'maxSpill'])
const TARGET_ALLOWED = 'a fraction in (0, 1], or false (off: only evictUntil spills)'
export const MAX_SPILL_ALLOWED = "a positive number of bytes, a size such as '10 GiB', or false (no cap)"

const isTarget = (t: unknown): t is number | false => t === false || (typeof t === 'number' && t > 0 && t <= 1)

/** The cap in bytes, null for none, undefined when `v` is no cap. */
export function maxSpillBytes(v: unknown): number | null | undefined {
  if (v === false || v === undefined) return null
  const n = parseBytes(v)
  return n !== undefined && n > 0 && Number.isSafeInteger(n) ? n : undefined
}

function validate(o: SpillBufferOptions): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  if (o === null || typeof o !== 'object') {
    return [{ field: 'options', value: o, allowed: 'an object { dir, memoryLimit, target?, codec?, level?, maxSpill? }' }]
  }
  for (const k of Object.keys(o)) {
    if (!OPTIONS.has(k)) problems.push({ field: k, value: (o as any)[k], allowed: `one of ${[...OPTIONS].join(', ')}` })
  }
  if (typeof o.dir !== 'string' || o.dir.length === 0) problems.push({ field: 'dir', value: o.dir, allowed: 'a directory path' })
  if (typeof o.memoryLimit !== 'number' || !Number.isSafeInteger(o.memoryLimit) || o.memoryLimit <= 0) {
    problems.push({ field: 'memoryLimit', value: o.memoryLimit, allowed: 'a positive whole number of bytes' })
  }
  if (!isTarget(o.target ?? 0.75)) problems.push({ field: 'target', value: o.target, allowed: TARGET_ALLOWED })
  if (maxSpillBytes(o.maxSpill) === undefined) problems.push({ field: 'maxSpill', value: o.maxSpill, allowed: MAX_SPILL_ALLOWED })
  const codecs = validCodecNames()
  if (o.codec !== undefined && !codecs.includes(o.codec)) {
    problems.push({ field: 'codec', value: o.codec, allowed: codecs.map((c) => `'${c}'`).join(', ') })
  }
  if (o.level !== undefined && !Number.isInteger(o.level)) problems.push({ field: 'level', value: o.level, allowed: 'an integer' })
  return problems
}

/**
 * Chunks by key in memory, with the least recently used spilled to
 * compressed files once managed memory passes `target × memoryLimit`.
 */
export class SpillBuffer {
  readonly dir: string
  readonly memoryLimit: number
  readonly codec: string
  /** The cap on spill bytes on disk; null: none. */
  readonly maxSpill: number | null
  #native: Binding.NativeSpillBuffer
  #target: number | false

  constructor(options: SpillBufferOptions) {
    const problems = validate(options)
    if (problems.length) throw new ConfigError(problems, 'SpillBuffer options')
    this.dir = options.dir
    this.memoryLimit = options.memoryLimit
    this.codec = options.codec ?? 'auto'
    this.#target = options.target ?? 0.75
    this.maxSpill = maxSpillBytes(options.maxSpill)!
    this.#native = callNativeSync(
      () =>
        new native.NativeSpillBuffer({
          dir: options.dir,
          memoryLimit: options.memoryLimit,
          target: this.#target === false ? undefined : this.#target,
          codec: this.codec,
          level: options.level,
          maxSpill: this.maxSpill ?? undefined,
        }),
    )
  }

  get target(): number | false {
    return this.#target
  }

  /**
   * Stores a chunk (the bytes are copied, but for a frame kernel's output,
   * which is taken as it is: nothing writes to it); may spill others to disk. A
   * TypedArray's element size goes with it (or `elementSize`, for bytes
   * known to hold such values), so a shuffle codec can use it.
   */
  set(key: string, data: Buffer | ArrayBufferView, elementSize?: number): Promise<void> {
    const buf = toBuffer(data)
    const size = elementSizeOf(data, elementSize)
    return callNative(() => this.#native.set(String(key), buf, size))
  }

  /** The chunk's bytes (read back from disk if spilled), or undefined. */
  async get(key: string): Promise<Buffer | undefined> {
    const b = await callNative(() => this.#native.get(String(key)))
    return b ?? undefined
  }

  /**
   * Like `get`, but a spilled chunk is read without coming back into memory:
   * a pass over spilled data then pushes nothing else out (and so writes
   * nothing). A chunk in memory counts as used, as with `get`.
   */
  async peek(key: string): Promise<Buffer | undefined> {
    const b = await callNative(() => this.#native.peek(String(key)))
    return b ?? undefined
  }

  /**
   * `peek` without a copy, for a reader that never writes the bytes (a
   * frame kernel's input): the Buffer is the stored chunk itself, and a
   * write to it would change what every later reader gets.
   */
  async peekShared(key: string): Promise<Buffer | undefined> {
    const b = await callNative(() => this.#native.peekShared(String(key)))
    return b ?? undefined
  }

  /**
   * A rechunk's new chunk, the box `out` of `itemSize`-byte elements, made
   * off the JS thread from its pieces: each a box and the key it is held
   * under here (read where it lies, a spilled one left on disk) or its
   * bytes. Undefined when a keyed piece is not held.
   */
  async assemble(out: { lo: number[]; hi: number[] }, itemSize: number, pieces: { lo: number[]; hi: number[]; key?: string; data?: Buffer }[]): Promise<Buffer | undefined> {
    const boxes = pieces.flatMap((p) => [...p.lo, ...p.hi])
    const keys = pieces.map((p) => (p.data ? '' : String(p.key)))
    const inline = pieces.flatMap((p) => (p.data ? [p.data] : []))
    const b = await callNative(() => this.#native.assemble(out.lo, out.hi, itemSize, boxes, keys, inline))
    return b ?? undefined
  }

  /**
   * The chunk as it should be sent to another worker. Transfer exists to move
   * bytes, so a spilled chunk goes out as the compressed frame already on
   * disk: verified (header and checksum) but not decompressed on the sender,
   * and not read back into memory (no unspill, nothing else pushed out).
   * `compressed: true` means `data` is a spillway frame for `decompress()`
   * (its codec is 'none' when the chunk did not compress); `false` means
   * `data` is the chunk itself, held in memory. Undefined when not held.
   */
  async getFrame(key: string): Promise<{ compressed: boolean; data: Buffer } | undefined> {
    const r = await this.getFrameShared(key)
    // The caller's own bytes, as from get: a write never reaches the held chunk.
    return r && !r.compressed ? { compressed: false, data: Buffer.from(r.data) } : r
  }

  /**
   * `getFrame` without a copy of a chunk held in memory, for a reader that
   * never writes the bytes (a socket sending them): they are the held chunk.
   */
  async getFrameShared(key: string): Promise<{ compressed: boolean; data: Buffer } | undefined> {
    const r = await callNative(() => this.#native.getFrame(String(key)))
    return r ? { compressed: r.frame, data: r.data } : undefined
  }

  /**
   * Stores a spilled chunk that arrives as its frame (what `getFrame` gave
   * with `compressed: true` on another buffer) straight on disk: verified,
   * never decompressed, taking no memory. Resolves to the chunk's size; a
   * bad frame rejects with ERR_SPILLWAY_CORRUPT_FRAME and stores nothing.
   */
  async setFrame(key: string, frame: Buffer): Promise<number> {
    return callNative(() => this.#native.setFrame(String(key), frame))
  }

  has(key: string): boolean {
    return this.#native.has(String(key))
  }

  delete(key: string): boolean {
    return callNativeSync(() => this.#native.delete(String(key)))
  }

  keys(): string[] {
    return this.#native.keys()
  }

  /** Moves the target (false: off); chunks above it spill at once. */
  async setTarget(fraction: number | false): Promise<void> {
    if (!isTarget(fraction)) throw new ConfigError([{ field: 'target', value: fraction, allowed: TARGET_ALLOWED }], 'SpillBuffer target')
    await callNative(() => this.#native.setTarget(fraction === false ? null : fraction))
    this.#target = fraction
  }

  /**
   * Spills LRU chunks until at most `bytes` stay in memory. After a failed
   * write, writes wait (100 ms doubling to 5 s, `spillBackoffSeconds`) and
   * this spills nothing until the wait is over or `retrySpillNow()`. At the
   * `maxSpill` cap it spills nothing until disk bytes fall.
   */
  evictUntil(bytes: number): Promise<number> {
    return callNative(() => this.#native.evictUntil(Math.max(0, Math.floor(bytes))))
  }

  /** Generates a chunk natively, straight into the buffer. */
  async generate(key: string, spec: ChunkSpec): Promise<number> {
    checkSpec(spec, 'SpillBuffer.generate arguments')
    return callNative(() => this.#native.generate(String(key), spec))
  }

  /** Reduces a held chunk natively where it lies; null when not held. */
  async reduce(key: string, dtype: string, op: string): Promise<ReducePartial | null> {
    checkReduce(dtype, op, 'SpillBuffer.reduce arguments')
    return callNative(() => this.#native.reduce(String(key), dtype, op))
  }

  /** Ends the wait after failed spill writes, for a caller that saw space freed. */
  retrySpillNow(): void {
    this.#native.retrySpillNow()
  }

  metrics(): SpillMetrics {
    const m = this.#native.metrics()
    return { ...m, lastWriteError: m.lastWriteError ?? undefined, targetBytes: m.targetBytes ?? undefined }
  }

  /** Drops every chunk and removes the spill files. */
  close(): Promise<void> {
    return callNative(() => this.#native.close())
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}
