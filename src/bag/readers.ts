// Bags from the user's files and values. Planning happens here, on the
// client: globs expanded, files stat'ed and cut into blocks; the workers
// read the blocks (worker/collections/bag/text-blocks.ts).

import { statSync, type Stats } from 'node:fs'
import { resolve } from 'node:path'
import { globSync, isDynamicPattern } from 'tinyglobby'
import { ArgumentError, callNativeSync, SpillwayError } from '../base/errors'
import { parseBytes } from '../base/units'
import { native } from '../native/binding'
import { compressionOfName } from '../native/file-codecs'
import type { Compression, PlannedFile, TextBlock } from '../wire/bag'
import { codeUnit, isTextEncoding, TEXT_ENCODINGS, type DecodeErrors } from '../wire/text-encoding'
import { Bag } from './bag'
import type { PartDef } from './graph'

export interface ReadTextOptions {
  /** Bytes per partition: a number or '128 MiB' (default 64 MiB). Small files are packed together up to it. */
  blocksize?: number | string
  /** 'infer' (default: by extension, .gz, .zst, .lz4), 'gzip', 'zstd', 'lz4' or 'none'. A compressed file is one partition, its lines streamed through the steps: a reduction over a file larger than a worker's memory runs within it. */
  compression?: 'infer' | 'gzip' | 'zstd' | 'lz4' | 'none'
  /** Default 'utf8'; 'utf16le' blocks are cut on its 2-byte code units. */
  encoding?: BufferEncoding
  /** Bytes not valid in the encoding: 'strict' (default) fails naming the file and byte, 'replace' reads U+FFFD for them. */
  errors?: DecodeErrors
  /** Default '\n'. Lines are given without it. */
  lineDelimiter?: string
  /** Items become `[line, path]`. */
  includePath?: boolean
}

const DEFAULT_BLOCKSIZE = 64 * 2 ** 20
const COMPRESSIONS = ['infer', 'gzip', 'zstd', 'lz4', 'none']
const READ_TEXT_OPTIONS = new Set(['blocksize', 'compression', 'encoding', 'errors', 'lineDelimiter', 'includePath'])
const DECODE_ERRORS = ['strict', 'replace']

function invalid(field: string, value: unknown, allowed: string, what: string): ArgumentError {
  return new ArgumentError([{ field, value, allowed }], what)
}

/** The `encoding` and `errors` options of a text reader, checked; `decode` holds `errors` only when not the default. */
export function textEncodingOptions(options: { encoding?: unknown; errors?: unknown }, what: string): { encoding: BufferEncoding; decode: { errors?: 'replace' } } {
  const encoding = options.encoding ?? 'utf8'
  if (!isTextEncoding(encoding)) throw invalid('options.encoding', encoding, `a text encoding Node's Buffer knows: ${TEXT_ENCODINGS.map((e) => `'${e}'`).join(', ')}`, what)
  const errors = options.errors ?? 'strict'
  if (!DECODE_ERRORS.includes(errors as string)) throw invalid('options.errors', errors, "'strict' (the default: invalid bytes fail naming the file and byte) or 'replace' (read as U+FFFD)", what)
  return { encoding, decode: errors === 'replace' ? { errors } : {} }
}

/** Block starts `blocksize` apart, rounded up to the encoding's code unit so no block starts inside a character's unit. */
export function blockStep(blocksize: number, encoding: string): number {
  const unit = codeUnit(encoding)
  return Math.ceil(blocksize / unit) * unit
}

/** The paths a path, a glob or a list of them names, in order (a file may be named more than once). */
function namedPaths(paths: unknown, what: string): string[] {
  const list = typeof paths === 'string' ? [paths] : paths
  if (!Array.isArray(list) || list.length === 0 || !list.every((p) => typeof p === 'string' && p.length > 0)) {
    throw invalid('paths', paths, 'a path, a glob or a non-empty list of them', what)
  }
  const out: string[] = []
  for (const p of list as string[]) {
    if (isDynamicPattern(p)) {
      const found = globSync(p, { absolute: true, onlyFiles: true, expandDirectories: false }).sort()
      if (found.length === 0) throw new SpillwayError('ERR_SPILLWAY_NO_FILES', `${what}: no file matches ${JSON.stringify(p)}`, { path: p })
      for (const f of found) out.push(f)
    } else out.push(resolve(p))
  }
  return out
}

/** The files a path, a glob or a list of them names, in order, each once. */
export function expandPaths(paths: unknown, what: string): string[] {
  const out: string[] = []
  const seen = new Set<string>()
  for (const f of namedPaths(paths, what)) {
    const id = fileIdentity(f)
    if (!seen.has(id)) (seen.add(id), out.push(f))
  }
  return out
}

/**
 * expandPaths and statFile for many files at once: one native call stats
 * them all (no Stats object each) and finds a file named twice by device
 * and inode; a path it could not stat, or not a file, is asked again by
 * statFile for the error that names why.
 */
export function plannedFiles(paths: unknown, what: string): PlannedFile[] {
  const named = namedPaths(paths, what)
  const rows = callNativeSync(() => native.statPaths(named))
  const out: PlannedFile[] = []
  for (let i = 0, r = 0; i < named.length; i++, r += 6) {
    if (rows[r + 5] >= 0) continue
    if (rows[r] !== 1) out.push(plannedFile(named[i], statFile(named[i], what)))
    else out.push({ path: named[i], size: rows[r + 1], mtimeMs: rows[r + 2], ctimeMs: rows[r + 3], ino: rows[r + 4] })
  }
  return out
}

/**
 * What makes two paths one file: a symlink loop under '**' names each file
 * many times, and a hard link or a symlink names it twice. A path that
 * cannot be stat'ed stands for itself (statFile then says why).
 */
function fileIdentity(path: string): string {
  try {
    const st = statSync(path, { bigint: true })
    return `${st.dev}:${st.ino}`
  } catch {
    return `path:${path}`
  }
}

/** The file as planned: a worker reads it only if it is still this one (worker/collections/bag/file-open.ts). */
export function plannedFile(path: string, st: Stats): PlannedFile {
  return { path, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino }
}

export function statFile(path: string, what: string) {
  try {
    const st = statSync(path)
    if (!st.isFile()) throw new SpillwayError('ERR_SPILLWAY_READ', `${what}: ${path} is not a file`, { path })
    return st
  } catch (e: any) {
    if (e instanceof SpillwayError) throw e
    throw new SpillwayError('ERR_SPILLWAY_READ', `${what}: cannot read ${path}: ${e?.message ?? e}`, { path, cause: e?.code }, { cause: e })
  }
}

function compressionOf(path: string, option: string): Compression {
  if (option === 'gzip' || option === 'zstd' || option === 'lz4') return option
  if (option === 'none') return undefined
  const byName = compressionOfName(path)
  if (byName) return byName
  if (/\.(bz2|xz)$/i.test(path)) {
    throw new SpillwayError('ERR_SPILLWAY_INVALID_ARGUMENT', `readText: ${path} is compressed in a format spillway does not read (gzip, zstd and lz4 it does); decompress it first or pass compression: 'none' to read it as it is`, { path })
  }
  return undefined
}

/**
 * Lines of text files: each file cut into blocks of `blocksize` bytes
 * split at the delimiter, small files packed together up to `blocksize`,
 * a compressed file one partition (it cannot be cut at an offset), decoded
 * a block at a time as the steps consume its lines.
 */
export function readText(paths: string | string[], options: ReadTextOptions = {}): Bag<string> {
  const what = 'readText'
  if (options === null || typeof options !== 'object') throw invalid('options', options, `an object { ${[...READ_TEXT_OPTIONS].join(', ')} }`, what)
  for (const k of Object.keys(options)) if (!READ_TEXT_OPTIONS.has(k)) throw invalid(`options.${k}`, (options as any)[k], `one of ${[...READ_TEXT_OPTIONS].join(', ')}`, what)
  const blocksize = options.blocksize === undefined ? DEFAULT_BLOCKSIZE : parseBytes(options.blocksize)
  if (!blocksize || blocksize < 1) throw invalid('options.blocksize', options.blocksize, "a positive number of bytes, or a size such as '128 MiB'", what)
  const compression = options.compression ?? 'infer'
  if (!COMPRESSIONS.includes(compression)) throw invalid('options.compression', compression, COMPRESSIONS.map((c) => `'${c}'`).join(', '), what)
  const { encoding, decode } = textEncodingOptions(options, what)
  const delimiter = options.lineDelimiter ?? '\n'
  if (typeof delimiter !== 'string' || delimiter.length === 0) throw invalid('options.lineDelimiter', delimiter, 'a non-empty string', what)
  const includePath = options.includePath ?? false

  const parts: PartDef[] = []
  // Small files go into the pending partition until it would pass blocksize.
  let pending: TextBlock[] = []
  let pendingBytes = 0
  const flush = () => {
    if (pending.length) parts.push({ source: { kind: 'text', blocks: pending, compression: undefined, encoding, delimiter, includePath, ...decode }, deps: [] })
    pending = []
    pendingBytes = 0
  }
  for (const file of plannedFiles(paths, what)) {
    const st = file
    const comp = compressionOf(file.path, compression)
    // A file not packed ends the pending partition first, so the bag's items keep the files' order.
    if (comp || st.size >= blocksize) flush()
    if (comp) {
      parts.push({ source: { kind: 'text', blocks: [{ ...file, start: 0, end: st.size }], compression: comp, encoding, delimiter, includePath, ...decode }, deps: [] })
    } else if (st.size < blocksize) {
      if (pendingBytes + st.size > blocksize) flush()
      pending.push({ path: file.path, size: file.size, mtimeMs: file.mtimeMs, ctimeMs: file.ctimeMs, ino: file.ino, start: 0, end: st.size })
      pendingBytes += st.size
    } else {
      const step = blockStep(blocksize, encoding)
      for (let start = 0; start < st.size; start += step) {
        const blocks = [{ ...file, start, end: Math.min(st.size, start + step) }]
        parts.push({ source: { kind: 'text', blocks, compression: undefined, encoding, delimiter, includePath, ...decode }, deps: [] })
      }
    }
  }
  flush()
  return new Bag<string>('read-text', parts)
}

export interface FromSequenceOptions {
  /** Partitions to cut the items into (default as Dask's: one item each up to 100 items, else about 100 partitions). */
  npartitions?: number
  /** Items per partition, instead of npartitions. */
  partitionSize?: number
}

/** A bag of the given items, cut into partitions in order. The items travel in the tasks. */
export function fromSequence<T>(items: Iterable<T>, options: FromSequenceOptions = {}): Bag<T> {
  const what = 'fromSequence'
  if (items === null || typeof (items as any)?.[Symbol.iterator] !== 'function' || typeof items === 'string') throw invalid('items', items, 'an array or other iterable of items', what)
  const list = [...items]
  if (options.npartitions !== undefined && options.partitionSize !== undefined) throw invalid('options', options, 'npartitions or partitionSize, not both', what)
  for (const f of ['npartitions', 'partitionSize'] as const) {
    const v = options[f]
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 1)) throw invalid(`options.${f}`, v, 'a positive integer', what)
  }
  const size = options.partitionSize ?? (options.npartitions ? Math.ceil(list.length / options.npartitions) : list.length <= 100 ? 1 : Math.floor(list.length / 100))
  const parts: PartDef[] = []
  for (let i = 0; i < list.length; i += Math.max(1, size)) parts.push({ source: { kind: 'items', items: list.slice(i, i + size) }, deps: [] })
  if (parts.length === 0) parts.push({ source: { kind: 'items', items: [] }, deps: [] })
  return new Bag<T>('from-sequence', parts)
}
