// Reads a text partition: byte ranges of files split at the delimiter by
// Dask's read_block rule (a block starts after the first delimiter at or
// past its offset, unless it starts the file, and ends after the first
// delimiter at or past its end), so every line of a file is read exactly
// once whatever the block size. A gzip file is read whole.

import { open, readFile, stat } from 'node:fs/promises'
import { gunzipSync } from 'node:zlib'
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
  if (compression !== 'gzip') return raw
  try {
    return gunzipSync(raw)
  } catch (e) {
    throw readFailed(b.path, e, 'is not valid gzip')
  }
}

/** The lines of one block (without their delimiters). */
function splitLines(bytes: Buffer, delim: Buffer, encoding: BufferEncoding): string[] {
  const text = bytes.toString(encoding)
  const d = delim.toString(encoding)
  const lines = text.split(d)
  // A final delimiter ends the last line; it does not start an empty one.
  if (lines.length && lines[lines.length - 1] === '') lines.pop()
  return lines
}

/**
 * The lines of the source's blocks, one array per block, in order (`[line,
 * path]` with includePath). Per block, not per line: an async generator's
 * yield per line costs a promise each (and the promise hooks on them), which
 * was most of a text partition's time.
 */
export async function* textBlockLines(src: TextSource): AsyncGenerator<unknown[]> {
  const delim = Buffer.from(src.delimiter, src.encoding)
  for (const b of src.blocks) {
    const bytes = src.compression ? await readWhole(b, src.compression) : await readBlock(b, delim)
    const lines = splitLines(bytes, delim, src.encoding)
    yield src.includePath ? lines.map((line) => [line, b.path]) : lines
  }
}

/** Every line of the source's blocks, in order; `[line, path]` with includePath. */
export async function* textItems(src: TextSource): AsyncGenerator<unknown> {
  for await (const lines of textBlockLines(src)) yield* lines
}
