// Reads a text partition: byte ranges of files split at the delimiter by
// Dask's read_block rule (a block starts after the first delimiter at or
// past its offset, unless it starts the file, and ends after the first
// delimiter at or past its end), so every line of a file is read exactly
// once whatever the block size. A compressed file (gzip, zstd, lz4) is one
// block, streamed by the core (text-stream.ts).

import type { FileHandle } from 'node:fs/promises'
import { SpillwayError } from '../../../base/errors'
import type { PartitionSource, TextBlock } from '../../../wire/bag'
import { codeUnit } from '../../../wire/text-encoding'
import { openPlanned, readFailed, readRange } from './file-open'
import { batchedTextItems, nativeBlockLines, wholeFiles } from './text-batch'
import { checkDecodes } from './text-decode'
import { eachItem, PushItems, type Sink } from './items'
import { StreamedText } from './text-stream'

export { readFailed } from './file-open'

type TextSource = Extract<PartitionSource, { kind: 'text' }>

const SCAN = 64 * 1024

/** The first `delim` in `hay` at or after `from` that starts on a code unit (`base` is hay's file offset), or -1. */
export function indexOfAligned(hay: Buffer, delim: Buffer, from: number, unit: number, base: number): number {
  let i = hay.indexOf(delim, from)
  // In UTF-16 the delimiter's bytes can straddle two code units (U+0A41 then U+0100 hold 0x0a 0x00).
  while (i !== -1 && (base + i) % unit !== 0) i = hay.indexOf(delim, i + 1)
  return i
}

/** The position just past the first delimiter at or after `from` (on a code unit), or the file's size. */
async function afterDelimiter(fd: FileHandle, from: number, size: number, delim: Buffer, unit: number): Promise<number> {
  let pos = from
  // Carry the last delimiter-length-1 bytes so a delimiter across two reads is found.
  let carry = Buffer.alloc(0)
  while (pos < size) {
    const n = Math.min(SCAN, size - pos)
    const buf = Buffer.allocUnsafe(n)
    const { bytesRead } = await fd.read(buf, 0, n, pos)
    if (bytesRead === 0) break
    const hay = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead)
    const i = indexOfAligned(hay, delim, 0, unit, pos - carry.length)
    if (i !== -1) return pos - carry.length + i + delim.length
    pos += bytesRead
    carry = Buffer.from(hay.subarray(Math.max(0, hay.length - (delim.length - 1))))
  }
  return size
}

/** A block's bytes (whole lines, Dask's read_block rule) and the file offset they start at. */
export async function readBlockAt(b: TextBlock, delim: Buffer, unit = 1): Promise<{ bytes: Buffer; offset: number }> {
  const fd = await openPlanned(b)
  try {
    const start = b.start === 0 ? 0 : await afterDelimiter(fd, b.start, b.size, delim, unit)
    const end = b.end >= b.size ? b.size : await afterDelimiter(fd, b.end, b.size, delim, unit)
    if (end <= start) return { bytes: Buffer.alloc(0), offset: start }
    return { bytes: await readRange(fd, start, end), offset: start }
  } catch (e) {
    if (e instanceof SpillwayError) throw e
    throw readFailed(b.path, e)
  } finally {
    await fd.close()
  }
}

export async function readBlock(b: TextBlock, delim: Buffer, unit = 1): Promise<Buffer> {
  return (await readBlockAt(b, delim, unit)).bytes
}

/** Bytes decoded and split at a time: each piece's strings die young, and scavenges are cheap. */
const PIECE = 1 << 20
/** Encodings in which a delimiter's bytes found in the data always end a whole character. */
const PIECEWISE = new Set(['utf8', 'utf-8', 'latin1', 'binary', 'ascii'])

/**
 * The lines of one block (without their delimiters), decoded and split a
 * piece of about 1 MiB at a time as they are consumed, not the whole block
 * into one array: a 64 MiB block's lines made at once outlive the young
 * generation, and collecting them was a fifth of a worker's time.
 */
export function* blockPieces(bytes: Buffer, delim: Buffer, encoding: BufferEncoding): Generator<string[]> {
  const d = delim.toString(encoding)
  const piecewise = PIECEWISE.has(encoding.toLowerCase())
  let pos = 0
  while (pos < bytes.length) {
    let cut = bytes.length
    if (piecewise && bytes.length - pos > PIECE) {
      const i = bytes.indexOf(delim, pos + PIECE)
      if (i !== -1) cut = i + delim.length
    }
    const lines = bytes.toString(encoding, pos, cut).split(d)
    // A final delimiter ends the last line; it does not start an empty one.
    if (lines[lines.length - 1] === '') lines.pop()
    yield lines
    pos = cut
  }
}

export function* blockLines(bytes: Buffer, delim: Buffer, encoding: BufferEncoding): Generator<string> {
  for (const lines of blockPieces(bytes, delim, encoding)) yield* lines
}

/** An uncompressed block's bytes, checked to decode in the source's encoding (text-decode.ts). */
async function blockBytes(b: TextBlock, src: TextSource, delim: Buffer): Promise<Buffer> {
  const { bytes, offset } = await readBlockAt(b, delim, codeUnit(src.encoding))
  checkDecodes(bytes, src.encoding, src.errors, { path: b.path, offset })
  return bytes
}

/** A block's lines split in JS (encodings other than UTF-8, replaced bytes): pushed a piece at a time, or iterated. */
function jsBlockItems(bytes: Buffer, b: TextBlock, src: TextSource, delim: Buffer): PushItems {
  const each = (sink: Sink) => {
    for (const lines of blockPieces(bytes, delim, src.encoding)) {
      if (src.includePath) for (let k = 0; k < lines.length; k++) sink([lines[k], b.path])
      else for (let k = 0; k < lines.length; k++) sink(lines[k])
    }
  }
  return new PushItems(each, function* () {
    if (src.includePath) for (const line of blockLines(bytes, delim, src.encoding)) yield [line, b.path]
    else yield* blockLines(bytes, delim, src.encoding)
  })
}

/**
 * A text partition's items. Whole small files packed into it are read in
 * one call to the core and their lines found there (worker/text-batch.ts);
 * the blocks of a large or compressed file are read here, their lines
 * indexed by the core when UTF-8. Lines are made as the steps consume them.
 */
export async function textPartition(src: TextSource): Promise<Iterable<unknown>> {
  const delim = Buffer.from(src.delimiter, src.encoding)
  if (wholeFiles(src)) return batchedTextItems(src, delim, (bytes, b) => jsBlockItems(bytes, b, src, delim))
  if (src.compression) return compressedItems(src, delim)
  const parts: Iterable<unknown>[] = []
  for (const b of src.blocks) {
    const bytes = await blockBytes(b, src, delim)
    parts.push((await nativeBlockLines(bytes, delim, src.encoding, src.includePath ? b.path : undefined)) ?? jsBlockItems(bytes, b, src, delim))
  }
  // Pushed a block at a time (items.ts); iterated where a step takes them all. A block's lines go once consumed.
  return new PushItems(
    (sink) => {
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i]
        parts[i] = []
        eachItem(p, sink)
      }
    },
    function* () {
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i]
        parts[i] = []
        yield* p
      }
    },
  )
}

/** A compressed file's lines, streamed (its partition has that one block). */
function compressedItems(src: TextSource, delim: Buffer): StreamedText {
  return new StreamedText(src.blocks[0], src, delim, (bytes, b) => jsBlockItems(bytes, b, src, delim))
}

/** Every line of the source's blocks, in order; `[line, path]` with includePath. */
export async function* textItems(src: TextSource): AsyncGenerator<unknown> {
  const delim = Buffer.from(src.delimiter, src.encoding)
  if (src.compression) {
    for await (const items of compressedItems(src, delim).blocks()) yield* items
    return
  }
  for (const b of src.blocks) {
    const bytes = await blockBytes(b, src, delim)
    if (src.includePath) for (const line of blockLines(bytes, delim, src.encoding)) yield [line, b.path]
    else yield* blockLines(bytes, delim, src.encoding)
  }
}
