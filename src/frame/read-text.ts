// `frame.readText`: text files as one utf8 column of lines, read in the core
// (crates/core/src/frame/read_text.rs), each file cut into blocks at line
// ends as readCsv's and the bags' readers cut them.

import { ArgumentError } from '../base/errors'
import { parseBytes } from '../base/units'
import { compressionOfName } from '../native/file-codecs'
import { expandPaths, plannedFile, statFile } from '../bag/readers'
import { Frame, type FramePart } from './frame'

export interface FrameTextOptions {
  /** The column's name (default 'line'). */
  column?: string
  /** Bytes per partition: a number or '64 MiB' (default 64 MiB). */
  blocksize?: number | string
  /** 'utf8' (default; an invalid byte fails the partition, naming file and offset) or 'latin1'. */
  encoding?: 'utf8' | 'latin1'
}

const OPTIONS = new Set(['column', 'blocksize', 'encoding'])
const bad = (field: string, value: unknown, allowed: string) => new ArgumentError([{ field, value, allowed }], 'frame.readText')

/**
 * A frame of text files' lines (a path, a glob or a list): one utf8 column,
 * lines without their "\n" or "\r\n". Files cut in blocks of `blocksize`
 * at line ends, files smaller than it packed together up to it; a .gz, .zst
 * or .lz4 file is one partition, streamed.
 */
export function readText(paths: string | string[], options: FrameTextOptions = {}): Frame {
  if (options === null || typeof options !== 'object') throw bad('options', options, `an object { ${[...OPTIONS].join(', ')} }`)
  for (const k of Object.keys(options)) if (!OPTIONS.has(k)) throw bad(`options.${k}`, (options as any)[k], `one of ${[...OPTIONS].join(', ')}`)
  const column = options.column ?? 'line'
  if (typeof column !== 'string' || column === '') throw bad('options.column', column, 'a non-empty column name')
  const encoding = options.encoding ?? 'utf8'
  if (encoding !== 'utf8' && encoding !== 'latin1') throw bad('options.encoding', encoding, "'utf8' or 'latin1'")
  const blocksize = options.blocksize === undefined ? 64 * 2 ** 20 : parseBytes(options.blocksize)
  if (!blocksize || blocksize < 1) throw bad('options.blocksize', options.blocksize, "a positive number of bytes, or a size such as '64 MiB'")
  const parts: FramePart[] = []
  // Small files share a partition up to blocksize, in order (Dask's read_text packs them too): a source tree's
  // 5 695 files of 136 MB were 5 695 tasks, and a shuffle after them moved a shard per task and output.
  let pack: { first: { path: string; size: number; mtimeMs: number }; more: { path: string; size: number; mtimeMs: number }[]; bytes: number } | undefined
  const flush = () => {
    if (!pack) return
    const { first, more } = pack
    parts.push({ source: { kind: 'text', path: first.path, start: 0, end: first.size, size: first.size, mtimeMs: first.mtimeMs, column, encoding, ...(more.length > 0 ? { more } : {}) }, deps: [] })
    pack = undefined
  }
  for (const path of expandPaths(paths, 'frame.readText')) {
    const { size, mtimeMs } = plannedFile(path, statFile(path, 'frame.readText'))
    // A compressed file is one partition, streamed by the core (its blocks cannot be found without decoding).
    const compressed = compressionOfName(path) !== undefined
    if (!compressed && size < blocksize) {
      if (pack && pack.bytes + size > blocksize) flush()
      if (pack) pack.more.push({ path, size, mtimeMs })
      else pack = { first: { path, size, mtimeMs }, more: [], bytes: 0 }
      pack.bytes += size
      continue
    }
    flush()
    const step = compressed ? Infinity : blocksize
    for (let start = 0; start < size || start === 0; start += step) {
      parts.push({ source: { kind: 'text', path, start, end: Math.min(size, start + blocksize), size, mtimeMs, column, encoding }, deps: [] })
    }
  }
  flush()
  return new Frame('read-text', parts, [{ name: column, type: 'utf8', nullable: true }])
}
