// Reads a text partition: byte ranges of files split at the delimiter by
// Dask's read_block rule (a block starts after the first delimiter at or
// past its offset, unless it starts the file, and ends after the first
// delimiter at or past its end), so every line of a file is read exactly
// once whatever the block size. A compressed file (gzip, zstd, lz4) is read whole.

import { open, readFile, stat } from 'node:fs/promises'
import { decompressFile } from '../native/file-codecs'
import { ownTaskError, SpillwayError } from '../base/errors'
import type { PartitionSource, TextBlock } from '../wire/bag'

type TextSource = Extract<PartitionSource, { kind: 'text' }>

const SCAN = 64 * 1024

export function readFailed(path: string, e: any, what = 'could not be read'): SpillwayError {
  return ownTaskError('ERR_SPILLWAY_READ', `file ${path} ${what}: ${e?.message ?? e}`, { path, cause: e?.code })
}

/** The position just past the first delimiter at or after `from`, or the file's size. */
async function afterDelimiter(fd: import('node:fs/promises').FileHandle, from: number, size: number, delim: Buffer): Promise<number> {
  let pos = from
  // Carry the last delimiter-length-1 bytes so a delimiter across two reads is found.
  let carry = Buffer.alloc(0)
  while (pos < size) {
    const n = Math.min(SCAN, size - pos)
    const buf = Buffer.allocUnsafe(n)
    const { bytesRead } = await fd.read(buf, 0, n, pos)
    if (bytesRead === 0) break
    const hay = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead)
    const i = hay.indexOf(delim)
    if (i !== -1) return pos - carry.length + i + delim.length
    pos += bytesRead
    carry = Buffer.from(hay.subarray(Math.max(0, hay.length - (delim.length - 1))))
  }
  return size
}

export async function readBlock(b: TextBlock, delim: Buffer): Promise<Buffer> {
  let fd
  try {
    fd = await open(b.path, 'r')
  } catch (e) {
    throw readFailed(b.path, e)
  }
  try {
    const st = await fd.stat()
    if (st.size !== b.size || Math.floor(st.mtimeMs) !== Math.floor(b.mtimeMs)) {
      throw ownTaskError('ERR_SPILLWAY_READ', `file ${b.path} changed after the bag was planned (size ${b.size} → ${st.size}): build the bag again`, { path: b.path })
    }
    const start = b.start === 0 ? 0 : await afterDelimiter(fd, b.start, b.size, delim)
    const end = b.end >= b.size ? b.size : await afterDelimiter(fd, b.end, b.size, delim)
    if (end <= start) return Buffer.alloc(0)
    const out = Buffer.allocUnsafe(end - start)
    let got = 0
    while (got < out.length) {
      const { bytesRead } = await fd.read(out, got, out.length - got, start + got)
      if (bytesRead === 0) break
      got += bytesRead
    }
    return out.subarray(0, got)
  } catch (e) {
    if (e instanceof SpillwayError) throw e
    throw readFailed(b.path, e)
  } finally {
    await fd.close()
  }
}

async function readWhole(b: TextBlock, compression: TextSource['compression']): Promise<Buffer> {
  let raw: Buffer
  try {
    const st = await stat(b.path)
    if (st.size !== b.size) throw ownTaskError('ERR_SPILLWAY_READ', `file ${b.path} changed after the bag was planned (size ${b.size} → ${st.size}): build the bag again`, { path: b.path })
    raw = await readFile(b.path)
  } catch (e) {
    if (e instanceof SpillwayError) throw e
    throw readFailed(b.path, e)
  }
  if (!compression) return raw
  try {
    return await decompressFile(raw, compression)
  } catch (e) {
    throw readFailed(b.path, e, `is not valid ${compression}`)
  }
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
export function* blockLines(bytes: Buffer, delim: Buffer, encoding: BufferEncoding): Generator<string> {
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
    yield* lines
    pos = cut
  }
}

function blockBytes(b: TextBlock, src: TextSource, delim: Buffer): Promise<Buffer> {
  return src.compression ? readWhole(b, src.compression) : readBlock(b, delim)
}

/**
 * A text partition's items: its blocks read (at most `blocksize` bytes in
 * all), then their lines made as the steps consume them; `[line, path]`
 * with includePath.
 */
export async function textPartition(src: TextSource): Promise<Iterable<unknown>> {
  const delim = Buffer.from(src.delimiter, src.encoding)
  const bufs: (Buffer | undefined)[] = []
  for (const b of src.blocks) bufs.push(await blockBytes(b, src, delim))
  return (function* () {
    for (const [i, b] of src.blocks.entries()) {
      const bytes = bufs[i]!
      bufs[i] = undefined
      if (src.includePath) for (const line of blockLines(bytes, delim, src.encoding)) yield [line, b.path]
      else yield* blockLines(bytes, delim, src.encoding)
    }
  })()
}

/** Every line of the source's blocks, in order; `[line, path]` with includePath. */
export async function* textItems(src: TextSource): AsyncGenerator<unknown> {
  const delim = Buffer.from(src.delimiter, src.encoding)
  for (const b of src.blocks) {
    const bytes = await blockBytes(b, src, delim)
    if (src.includePath) for (const line of blockLines(bytes, delim, src.encoding)) yield [line, b.path]
    else yield* blockLines(bytes, delim, src.encoding)
  }
}
