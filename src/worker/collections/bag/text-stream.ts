// A compressed text file's lines streamed through a partition's steps: the
// core decodes a block of whole lines at a time (the next one on the
// thread pool while the steps consume this one), so a file whose content
// is larger than the worker's memory is counted, filtered or written
// without ever being whole. A compressed file cannot be cut at an offset:
// it stays one partition.

import type { JsLineBlock } from '../../../../index'
import { callNative, callNativeSync, ownTaskError, SpillwayError } from '../../../base/errors'
import { native } from '../../../native/binding'
import type { PartitionSource, TextBlock } from '../../../wire/bag'
import { codeUnit, isUtf8Encoding } from '../../../wire/text-encoding'
import { heapOfItems } from '../shuffle/heap-estimate'
import { batchFault } from './file-open'
import { indexedLines, PIECE } from './text-batch'
import { checkDecodes } from './text-decode'
import { drainAll, type Stage } from './async-stage'
import { eachItem, type Sink } from './items'

type TextSource = Extract<PartitionSource, { kind: 'text' }>

/** Decompressed bytes per block: its lines die young, and two blocks at most are held at once. */
export const STREAM_BLOCK = 4 << 20

/**
 * Share of a worker's limit a streamed file's items kept whole may take:
 * less than a shuffle output's, since the task's result is then serialized
 * to be stored or sent (a second copy of it).
 */
const KEPT_SHARE = 0.4
/** Share of the limit the worker's process may reach while a task keeps a streamed file's items: under the nanny's terminate threshold by more than a block's items. */
const RSS_SHARE = 0.8
/** Share of the limit the kept items must reach before the process's rss counts against them. */
const ITEMS_FLOOR = 0.1

type Reader = ReturnType<typeof native.openCompressedLines>

/** The core's error for a file that is not valid in its format, as the readers word theirs. */
function streamError(b: TextBlock, e: unknown): unknown {
  if (!(e instanceof SpillwayError) || e.code !== 'ERR_SPILLWAY_READ') return e
  const why = e.message.startsWith(`reading ${b.path}: `) ? e.message.slice(`reading ${b.path}: `.length) : e.message
  return ownTaskError('ERR_SPILLWAY_READ', `file ${b.path} is ${why}`, { path: b.path }, { cause: e })
}

/** The lines of a compressed file's blocks, as the steps take them: pushed a block at a time (`blocks`), or pulled (iterated). */
export class StreamedText implements Iterable<unknown> {
  readonly path: string
  readonly #b: TextBlock
  readonly #src: TextSource
  readonly #fallback: (bytes: Buffer, b: TextBlock) => Iterable<unknown>
  readonly #delim: Buffer
  #reader: Reader | undefined
  /** Decompressed bytes handed to the steps so far. */
  bytesRead = 0

  constructor(b: TextBlock, src: TextSource, delim: Buffer, fallback: (bytes: Buffer, b: TextBlock) => Iterable<unknown>) {
    this.#b = b
    this.#src = src
    this.#delim = delim
    this.#fallback = fallback
    this.path = b.path
  }

  get compression(): string {
    return this.#src.compression!
  }

  #open(): Reader {
    if (this.#reader) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `the lines of ${this.path} are read once`)
    const b = this.#b
    const plan = new Float64Array([b.size, Math.floor(b.mtimeMs), b.ctimeMs === undefined ? NaN : Math.floor(b.ctimeMs), b.ino ?? NaN])
    const piece = isUtf8Encoding(this.#src.encoding) ? PIECE : undefined
    return (this.#reader = callNativeSync(() => native.openCompressedLines(b.path, plan, this.#src.compression!, this.#delim, codeUnit(this.#src.encoding), piece)))
  }

  /** A block's items, or undefined at the end. */
  #items(r: JsLineBlock): Iterable<unknown> | undefined {
    if (r.fault) throw batchFault(this.#b, r.fault)
    if (!r.bytes) return undefined
    this.bytesRead += r.bytes.length
    if (r.lines) return indexedLines(r.bytes, r.lines, this.#src.includePath ? [this.path] : undefined)
    checkDecodes(r.bytes, this.#src.encoding, this.#src.errors, { path: this.path, offset: r.offset, compression: this.#src.compression })
    return this.#fallback(r.bytes, this.#b)
  }

  /** Each block's items in order, the next block decoded off the JS thread while this one's are consumed. */
  async *blocks(): AsyncGenerator<Iterable<unknown>> {
    const reader = this.#open()
    const next = () => callNative(() => reader.next(STREAM_BLOCK)).catch((e) => Promise.reject(streamError(this.#b, e)))
    let pending = next()
    for (;;) {
      const r = await pending
      const items = this.#items(r)
      if (!items) return
      pending = next()
      // Handled here so a failure while the steps run is not unhandled; awaited above on the next turn.
      pending.catch(() => {})
      yield items
    }
  }

  /** Pulled, for steps that take the items as a whole (mapPartitions, a write, a custom reduction): decoded on the JS thread. */
  *[Symbol.iterator](): Iterator<unknown> {
    const reader = this.#open()
    for (;;) {
      let r: JsLineBlock
      try {
        r = callNativeSync(() => reader.nextSync(STREAM_BLOCK))
      } catch (e) {
        throw streamError(this.#b, e)
      }
      const items = this.#items(r)
      if (!items) return
      yield* items
    }
  }
}

/**
 * The bound of a streamed file's items kept whole (the partition's items
 * are its result): checked after each block, so a file too large to keep
 * fails by name instead of taking the worker down.
 */
export class KeptBound {
  #counted = 0
  #heap = 0
  readonly #budget: number

  constructor(
    private readonly text: StreamedText,
    private readonly memoryLimit: number,
  ) {
    this.#budget = KEPT_SHARE * memoryLimit
  }

  check(kept: unknown[]): void {
    if (kept.length > this.#counted) this.#heap += heapOfItems(kept.slice(this.#counted))
    this.#counted = kept.length
    // The process too, once the items are a real part of it: on small workers what the worker holds besides
    // takes much of the limit (and rss does not shrink back at once after an earlier task).
    const rss = process.memoryUsage.rss()
    if (this.#heap <= this.#budget && (rss <= RSS_SHARE * this.memoryLimit || this.#heap < ITEMS_FLOOR * this.memoryLimit)) return
    const mib = (n: number) => `${Math.round(n / 2 ** 20)} MiB`
    throw ownTaskError(
      'ERR_SPILLWAY_TOO_LARGE',
      `file ${this.text.path} (${this.text.compression}) is streamed a block at a time, but this task keeps its items whole (the bag's items are its result, not a reduction's): ${kept.length} items from its first ${this.text.bytesRead} decompressed bytes already take about ${mib(this.#heap)} (the worker's process ${mib(rss)}), past what this worker's ${mib(this.memoryLimit)} limit allows (${Math.round(KEPT_SHARE * 100)}% for the items, ${Math.round(RSS_SHARE * 100)}% for the process): reduce them (count, frequencies, foldBy, reduction), write them (toTextfiles) or give workers more memory`,
      { path: this.text.path, items: kept.length, decompressedBytes: this.text.bytesRead, memoryBytes: Math.round(this.#heap), rss, memoryLimit: this.memoryLimit },
    )
  }
}

/**
 * A streamed file's items pushed through the steps' `sink` a block at a
 * time; async steps (`stages`, first to last) drained after each block, so
 * no more than a block's items wait in their queues. `kept`: the task's
 * result array, bounded by the worker's limit.
 */
export async function pushStreamed(text: StreamedText, sink: Sink, stages: Stage[], kept: unknown[] | undefined, memoryLimit: number | undefined): Promise<void> {
  const bound = kept && memoryLimit !== undefined && Number.isFinite(memoryLimit) ? new KeptBound(text, memoryLimit) : undefined
  for await (const items of text.blocks()) {
    eachItem(items, sink)
    if (stages.length) await drainAll(stages)
    bound?.check(kept!)
  }
}
