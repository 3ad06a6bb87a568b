// A bag fed from a stream: the source's items cut into partitions and each
// scattered to a worker as it fills, with at most `maxInFlight` scatters
// under way, so the source is read no faster than the workers store what
// it gives and the client holds a few partitions at a time. The partitions
// then live on the workers (spilled as their memory needs) until the bag
// is released, as a persisted bag's do.

import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { ArgumentError } from '../base/errors'
import type { Future } from '../futures/future'
import { isTextEncoding, TEXT_ENCODINGS } from '../wire/text-encoding'
import { Bag } from './bag'
import type { PartDef } from './graph'
import { NO_UPSTREAM } from './upstream'

/** What the bag needs of the client: its scatter (a Client is one). */
export interface ScatterTarget {
  scatter(value: unknown, options?: { hash?: boolean; split?: boolean }): Promise<unknown>
}

export type StreamSource<T> = AsyncIterable<T> | Iterable<T> | Readable | ReadableStream<T>

export interface FromAsyncIterableOptions {
  /** The client whose workers take the partitions. */
  client: ScatterTarget
  /** Items per partition (default 10 000). */
  partitionSize?: number
  /** Partitions being scattered at once before the source is read further (default 4). */
  maxInFlight?: number
  /** A byte stream's encoding, for its lines (default 'utf8'). */
  encoding?: BufferEncoding
}

const OPTIONS = new Set(['client', 'partitionSize', 'maxInFlight', 'encoding'])

function invalid(field: string, value: unknown, allowed: string): ArgumentError {
  return new ArgumentError([{ field, value, allowed }], 'fromAsyncIterable')
}

function isWebStream(s: unknown): s is ReadableStream {
  return typeof (s as any)?.getReader === 'function'
}

function isNodeReadable(s: unknown): s is Readable {
  return typeof (s as any)?.pipe === 'function' && typeof (s as any)?.readableObjectMode === 'boolean'
}

/** Lines of a stream of bytes (or strings), without their '\n', decoded across chunk boundaries. */
async function* lines(chunks: AsyncIterable<unknown>, encoding: BufferEncoding): AsyncIterable<string> {
  const decoder = new StringDecoder(encoding)
  let carry = ''
  for await (const chunk of chunks) {
    const text = carry + (typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer))
    const cut = text.split('\n')
    carry = cut.pop()!
    yield* cut
  }
  carry += decoder.end()
  if (carry) yield carry
}

/** A web stream's chunks; Uint8Array chunks are bytes, made into lines, as a Node byte stream's. */
async function* webChunks(stream: ReadableStream, encoding: BufferEncoding): AsyncIterable<unknown> {
  const reader = stream.getReader()
  let bytes: boolean | undefined
  const asBytes = async function* (first: unknown) {
    yield first
    for (;;) {
      const r = await reader.read()
      if (r.done) return
      yield r.value
    }
  }
  try {
    const first = await reader.read()
    if (first.done) return
    bytes = first.value instanceof Uint8Array
    if (bytes) yield* lines(asBytes(first.value), encoding)
    else yield* asBytes(first.value)
  } finally {
    // A consumer that stops early (an error downstream) cancels the stream, as for-await does a Readable.
    await reader.cancel().catch(() => undefined)
    reader.releaseLock()
  }
}

/** The source as items: an object-mode stream's objects, a byte stream's lines. */
function itemsOf(source: unknown, encoding: BufferEncoding): AsyncIterable<unknown> | Iterable<unknown> {
  if (isNodeReadable(source)) return source.readableObjectMode ? source : lines(source, encoding)
  if (isWebStream(source)) return webChunks(source, encoding)
  if (source != null && typeof source !== 'string' && (typeof (source as any)[Symbol.asyncIterator] === 'function' || typeof (source as any)[Symbol.iterator] === 'function')) return source as AsyncIterable<unknown>
  throw invalid('source', source, 'an async iterable, an iterable, a Node Readable or a web ReadableStream')
}

/**
 * A bag of the source's items, `partitionSize` to a partition, each held
 * by a worker once scattered. Resolves when the source has ended and every
 * partition is stored; `bag.release()` lets them go. A Node Readable in
 * object mode gives its objects; a byte stream (a Node Readable not in
 * object mode, a web ReadableStream of Uint8Array) gives its lines,
 * decoded by `encoding`, without their '\n'.
 */
export async function fromAsyncIterable<T = string>(source: StreamSource<T>, options: FromAsyncIterableOptions): Promise<Bag<T>> {
  if (options === null || typeof options !== 'object') throw invalid('options', options, `an object { ${[...OPTIONS].join(', ')} }`)
  for (const k of Object.keys(options)) if (!OPTIONS.has(k)) throw invalid(`options.${k}`, (options as any)[k], `one of ${[...OPTIONS].join(', ')}`)
  const { client } = options
  if (typeof client?.scatter !== 'function') throw invalid('options.client', client, 'the Client whose workers take the partitions')
  const size = options.partitionSize ?? 10_000
  if (!(Number.isSafeInteger(size) && size >= 1)) throw invalid('options.partitionSize', size, 'a positive integer (items per partition)')
  const maxInFlight = options.maxInFlight ?? 4
  if (!(Number.isSafeInteger(maxInFlight) && maxInFlight >= 1)) throw invalid('options.maxInFlight', maxInFlight, 'a positive integer')
  const encoding = options.encoding ?? 'utf8'
  if (!isTextEncoding(encoding)) throw invalid('options.encoding', encoding, TEXT_ENCODINGS.map((e) => `'${e}'`).join(', '))
  const items = itemsOf(source, encoding)

  const futures: Future[] = []
  const inFlight = new Set<Promise<void>>()
  let failed: unknown
  const send = (part: unknown[]) => {
    const slot = futures.length
    futures.push(undefined as unknown as Future)
    const p: Promise<void> = client.scatter(part, { hash: false, split: false }).then(
      (f) => void (futures[slot] = f as Future),
      (e) => void (failed ??= e),
    )
    inFlight.add(p)
    void p.finally(() => inFlight.delete(p))
  }
  try {
    let part: unknown[] = []
    for await (const item of items as AsyncIterable<unknown>) {
      part.push(item)
      if (part.length < size) continue
      send(part)
      part = []
      // Backpressure: the source waits while the workers are still taking what it gave.
      while (inFlight.size >= maxInFlight && failed === undefined) await Promise.race(inFlight)
      if (failed !== undefined) throw failed
    }
    if (part.length || futures.length === 0) send(part)
    await Promise.all(inFlight)
    if (failed !== undefined) throw failed
  } catch (e) {
    await Promise.allSettled(inFlight)
    for (const f of futures) f?.release()
    throw e
  }
  const parts: PartDef[] = futures.map((f) => ({ source: { kind: 'inputs' }, deps: [f.key] }))
  // The Futures hold the partitions on the workers while any bag made from this one (which shares its parts) lives.
  Object.defineProperty(parts, 'heldBy', { value: futures })
  return new Bag<T>('from-async-iterable', parts, [], NO_UPSTREAM, { release: () => futures.forEach((f) => f.release()) })
}
