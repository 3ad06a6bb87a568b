// A packed partition of small text files read in one call to the core
// (open, fstat, the plan's checks and the read for every file, off the JS
// thread), and lines made from a line index the core found: each piece of
// about a MiB decoded once, its lines sliced out of the string.

import type { JsLineIndex } from '../../../../index'
import { callNative, callNativeSync } from '../../../base/errors'
import { native } from '../../../native/binding'
import type { PartitionSource, TextBlock } from '../../../wire/bag'
import { isUtf8Encoding } from '../../../wire/text-encoding'
import { batchFault } from './file-open'
import { checkDecodes } from './text-decode'

type TextSource = Extract<PartitionSource, { kind: 'text' }>

/** Bytes decoded into one string at a time: under V8's large-object size (128 KiB), so the string and its sliced lines die young in the nursery. */
export const PIECE = 64 << 10

/** Whether every block of the source is a whole uncompressed file: those are read in one batch. */
export function wholeFiles(src: TextSource): boolean {
  return !src.compression && src.blocks.every((b) => b.start === 0 && b.end >= b.size)
}

/** Per file: size, whole-ms mtime, whole-ms ctime (NaN if unknown), inode (NaN if unknown). */
function plans(blocks: TextBlock[]): Float64Array {
  const out = new Float64Array(blocks.length * 4)
  blocks.forEach((b, i) => out.set([b.size, Math.floor(b.mtimeMs), b.ctimeMs === undefined ? NaN : Math.floor(b.ctimeMs), b.ino ?? NaN], i * 4))
  return out
}

/**
 * The lines a line index gives, in order; `[line, path]` with `paths` (one
 * per file). An iterator by hand, not a generator: a partition's steps
 * pull tens of millions of lines through it, and each generator frame
 * between them costs a resume per line.
 */
export class IndexedLines implements IterableIterator<unknown> {
  #text = ''
  #piece = -4
  #line = 0
  #last = 0
  #file = -1
  #left = 0

  constructor(
    private readonly bytes: Buffer,
    private readonly ix: JsLineIndex,
    private readonly paths?: string[],
  ) {}

  [Symbol.iterator](): this {
    return this
  }

  next(): IteratorResult<unknown> {
    while (this.#line >= this.#last) if (!this.#nextPiece()) return { value: undefined, done: true }
    const l = this.#line++
    const line = this.#text.slice(this.ix.starts[l], this.ix.ends[l])
    if (!this.paths) return { value: line, done: false }
    while (this.#left === 0) this.#left = this.ix.fileLines[++this.#file]
    this.#left--
    return { value: [line, this.paths[this.#file]], done: false }
  }

  /** Decodes the next piece: Latin-1 (a copy into a one-byte string) when it is all ASCII. */
  #nextPiece(): boolean {
    const p = (this.#piece += 4)
    const pieces = this.ix.pieces
    if (p >= pieces.length) return ((this.#text = ''), false)
    this.#text = this.bytes.toString(pieces[p + 3] ? 'latin1' : 'utf8', pieces[p], pieces[p + 1])
    this.#line = pieces[p + 2]
    this.#last = p + 4 < pieces.length ? pieces[p + 6] : this.ix.starts.length
    return true
  }
}

export function indexedLines(bytes: Buffer, ix: JsLineIndex, paths?: string[]): IterableIterator<unknown> {
  return new IndexedLines(bytes, ix, paths)
}

/** Items of whole-file batches read one after another: `read(k)` gives batch k's items, and is called only once batch k-1's are consumed. */
class Batches implements IterableIterator<unknown> {
  #k = 0
  #items: Iterator<unknown>

  constructor(
    first: Iterator<unknown>,
    private readonly count: number,
    private readonly read: (k: number) => Iterator<unknown>,
  ) {
    this.#items = first
  }

  [Symbol.iterator](): this {
    return this
  }

  next(): IteratorResult<unknown> {
    for (;;) {
      const r = this.#items.next()
      if (!r.done) return r
      if (++this.#k >= this.count) return r
      this.#items = this.read(this.#k)
    }
  }
}

/** The lines of one block of valid UTF-8 from the core's index; undefined when the encoding is not UTF-8 or the bytes are not valid. */
export async function nativeBlockLines(bytes: Buffer, delim: Buffer, encoding: string, path: string | undefined): Promise<Iterable<unknown> | undefined> {
  if (!isUtf8Encoding(encoding) || bytes.length === 0) return undefined
  const ix = await callNative(() => native.indexTextLines(bytes, delim, PIECE))
  return ix ? indexedLines(bytes, ix, path === undefined ? undefined : [path]) : undefined
}

/** Bytes of files read in one call: the next batch is read while the steps run over this one. */
export const BATCH = 4 << 20

/** The blocks cut into runs of about BATCH bytes, in order. */
function batches(blocks: TextBlock[]): TextBlock[][] {
  const out: TextBlock[][] = []
  let run: TextBlock[] = []
  let bytes = 0
  for (const b of blocks) {
    if (run.length && bytes + b.size > BATCH) (out.push(run), (run = []), (bytes = 0))
    run.push(b)
    bytes += b.size
  }
  if (run.length) out.push(run)
  return out
}

type Read = Awaited<ReturnType<typeof native.readTextFiles>>

/** One batch's items from the core's read: faults and invalid bytes as coded errors, lines from the index when it made one. */
function batchItems(r: Read, blocks: TextBlock[], src: TextSource, fallback: (bytes: Buffer, b: TextBlock) => Iterable<unknown>): Iterator<unknown> {
  if (r.fault) throw batchFault(blocks[r.fault.index], r.fault)
  const bytes = r.bytes!
  if (r.lines) return new IndexedLines(bytes, r.lines, src.includePath ? blocks.map((b) => b.path) : undefined)
  const ends = r.fileEnds!
  const files = blocks.map((b, i) => ({ b, bytes: bytes.subarray(i ? ends[i - 1] : 0, ends[i]) }))
  for (const f of files) checkDecodes(f.bytes, src.encoding, src.errors, { path: f.b.path, offset: 0 })
  return (function* () {
    for (const f of files) yield* fallback(f.bytes, f.b)
  })()
}

/**
 * A partition of whole files, read in batches of about BATCH bytes by the
 * core: the first awaited, each next one started on a thread of its own
 * before the steps consume this one's lines (they do so synchronously, so
 * its result is joined, not awaited). Lines come from the core's index
 * when the encoding is UTF-8 and the bytes valid, else file by file from
 * `fallback` (the JS splitter) after the strict decode check.
 */
export async function batchedTextItems(src: TextSource, delim: Buffer, fallback: (bytes: Buffer, b: TextBlock) => Iterable<unknown>): Promise<Iterable<unknown>> {
  const delimiter = isUtf8Encoding(src.encoding) ? delim : undefined
  const runs = batches(src.blocks)
  const first = await callNative(() => native.readTextFiles(runs[0].map((b) => b.path), plans(runs[0]), delimiter, PIECE))
  if (first.fault) throw batchFault(runs[0][first.fault.index], first.fault)
  // Batch k+1 is started when batch k's items are first asked for, and joined when they run out.
  let next: { wait(): Read } | undefined
  const start = (k: number) => {
    next = k < runs.length ? callNativeSync(() => native.startTextFiles(runs[k].map((b) => b.path), plans(runs[k]), delimiter, PIECE)) : undefined
  }
  start(1)
  return new Batches(batchItems(first, runs[0], src, fallback), runs.length, (k) => {
    const r = callNativeSync(() => next!.wait())
    start(k + 1)
    return batchItems(r, runs[k], src, fallback)
  })
}
