// Writes a partition's items as lines of text, first under a temporary
// name in the target's directory and then renamed over it: a failed or
// repeated task never leaves half a file, and readers see the old file or
// the new one.

import { randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGzip } from 'node:zlib'
import { basename, dirname, join } from 'node:path'
import { compressFile } from '../../../native/file-codecs'
import { ownTaskError, SpillwayError } from '../../../base/errors'
import type { Compression } from '../../../wire/bag'

/** What a value is, for a message: 'a number', 'null', 'an array', 'a Map'. */
export function kindOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'object') {
    const name = Object.getPrototypeOf(v)?.constructor?.name
    return name && name !== 'Object' ? `a ${name}` : 'an object'
  }
  return typeof v === 'undefined' ? 'undefined' : /^[aeiou]/.test(typeof v) ? `an ${typeof v}` : `a ${typeof v}`
}

/** Strings gathered into buffers of about a MiB, as the items they come from are taken. */
function* batched(chunks: Iterable<string>): Iterable<Buffer> {
  let pending: string[] = []
  let size = 0
  for (const c of chunks) {
    pending.push(c)
    size += c.length
    if (size >= 1 << 20) {
      yield Buffer.from(pending.join(''), 'utf8')
      pending = []
      size = 0
    }
  }
  if (pending.length) yield Buffer.from(pending.join(''), 'utf8')
}

/**
 * Writes `chunks` to `path`, first under a temporary name: streamed as the
 * items are taken (through zlib's stream for gzip); zstd and LZ4 frames are
 * made whole, as the core's encoders take whole buffers.
 */
export async function writeChunks(path: string, chunks: Iterable<string>, compression: Compression): Promise<string> {
  return writeAtomically(path, async (tmp) => {
    if (compression === 'zstd' || compression === 'lz4') await writeFile(tmp, await compressFile(Buffer.concat([...batched(chunks)]), compression))
    else if (compression === 'gzip') await pipeline(Readable.from(batched(chunks)), createGzip(), createWriteStream(tmp))
    else await pipeline(Readable.from(batched(chunks)), createWriteStream(tmp))
  })
}

/** `write(tmp)` makes the file under a temporary name beside `path`, then it is renamed to `path`; on failure nothing is left. */
export async function writeAtomically(path: string, write: (tmp: string) => Promise<void>): Promise<string> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    await mkdir(dirname(path), { recursive: true })
    // An earlier run of this task killed mid-write left its temporary file: this run replaces it.
    const stale = `.${basename(path)}.`
    for (const f of await readdir(dirname(path))) if (f.startsWith(stale) && f.endsWith('.tmp')) await rm(join(dirname(path), f), { force: true })
    await write(tmp)
    await rename(tmp, path)
  } catch (e: any) {
    // The cause may be that the directory cannot exist (a component is a file): cleaning up then fails too.
    await rm(tmp, { force: true }).catch(() => undefined)
    if (e instanceof SpillwayError) throw e
    throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: ${e?.message ?? e}`, { path, cause: e?.code }, { cause: e })
  }
  return path
}

function* lineChunks(path: string, items: Iterable<unknown>): Iterable<string> {
  let i = 0
  // As Dask's to_textfiles, lines are strings: String() of an object would write '[object Object]'.
  for (const v of items) {
    if (typeof v !== 'string') {
      throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: item ${i} of its partition is ${kindOf(v)}, not a string; map the items to lines first (e.g. .map(JSON.stringify) or .map(String))`, { path, item: i, type: kindOf(v) })
    }
    yield v + '\n'
    i++
  }
}

export function writeLines(path: string, items: Iterable<unknown>, compression: Compression): Promise<string> {
  return writeChunks(path, lineChunks(path, items), compression)
}
