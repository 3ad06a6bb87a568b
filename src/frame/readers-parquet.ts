// Frames of Parquet files, planned on the client from their footers (one
// native call): the schema unified across files, and the row groups grouped
// into partitions of about `blocksize` bytes of the columns read — across
// files too, as Dask's split_row_groups='adaptive' with aggregate_files: a
// task per small file or small row group costs more to schedule than to read.
// Workers read their row groups with arrow-rs's reader, skipping those whose
// statistics rule out every row of the frame's first filter
// (crates/core/src/frame/read_parquet.rs).

import { ArgumentError, callNativeSync } from '../base/errors'
import { parseBytes } from '../base/units'
import { native } from '../native/binding'
import type { FieldSpec } from '../wire/frame'
import { expandPaths, plannedFile, statFile } from '../bag/readers'
import { Frame, type FramePart } from './frame'
import { recorded } from './plan/node'

export interface FrameParquetOptions {
  /** The columns to read, in this order (default: all of the first file's). */
  columns?: string[]
  /** Bytes (of the columns read, as Arrow holds them once read) per partition: consecutive row groups, of one file or of several small ones, share a partition up to this; a number or '128 MiB' (default 64 MiB). A row group is never split. */
  blocksize?: number | string
}

const OPTIONS = new Set(['columns', 'blocksize'])

const bad = (field: string, value: unknown, allowed: string, what: string) => new ArgumentError([{ field, value, allowed }], what)

/** `columns` checked: a non-empty list of distinct names, or undefined. */
export function columnsOption(v: unknown, what: string): string[] | undefined {
  if (v === undefined) return undefined
  if (!Array.isArray(v) || v.length === 0 || !v.every((c) => typeof c === 'string' && c !== '') || new Set(v).size !== v.length) {
    throw bad('options.columns', v, "a non-empty list of distinct column names, e.g. ['id', 'price']", what)
  }
  return v
}

export function checkOptions(options: unknown, allowed: Set<string>, what: string): void {
  if (options === null || typeof options !== 'object') throw bad('options', options, `an object { ${[...allowed].join(', ')} }`, what)
  for (const k of Object.keys(options)) if (!allowed.has(k)) throw bad(`options.${k}`, (options as any)[k], `one of ${[...allowed].join(', ')}`, what)
}

export function blocksizeOption(v: unknown, what: string): number {
  const n = v === undefined ? 64 * 2 ** 20 : parseBytes(v)
  if (!n || n < 1) throw bad('options.blocksize', v, "a positive number of bytes, or a size such as '64 MiB'", what)
  return n
}

/** A file as a partition names it: its size and mtime key the task to the file's version. */
type ParquetFile = { path: string; size: number; mtimeMs: number }
type Piece = ParquetFile & { rowGroups: number[] }

/**
 * The row groups of `files` (each file's `[rows, bytes]` in `layouts`), in
 * order, cut into partitions once the next would take one past `blocksize`
 * bytes: a big row group is a partition of its own, small ones and small
 * files share one. Each partition is its files' runs of row groups.
 */
export function groupParquet(files: ParquetFile[], layouts: [number, number][][], blocksize: number): Piece[][] {
  const out: Piece[][] = []
  let cur: Piece[] = []
  let bytes = 0
  files.forEach((file, f) => {
    layouts[f].forEach(([, b], i) => {
      if (cur.length > 0 && bytes + b > blocksize) (out.push(cur), (cur = []), (bytes = 0))
      const last = cur[cur.length - 1]
      if (last?.path === file.path) last.rowGroups.push(i)
      else cur.push({ path: file.path, size: file.size, mtimeMs: file.mtimeMs, rowGroups: [i] })
      bytes += b
    })
  })
  if (cur.length > 0) out.push(cur)
  return out
}

/**
 * A frame of Parquet files (a path, a glob or a list), in any codec that
 * pyarrow, DuckDB and Polars write. Types come from the files (integers of
 * different widths widen, integers and floats make float64); INT64 reads as
 * int64, timestamps, decimals, lists and structs as themselves.
 */
export function readParquet(paths: string | string[], options: FrameParquetOptions = {}): Frame {
  const what = 'frame.readParquet'
  checkOptions(options, OPTIONS, what)
  const columns = columnsOption(options.columns, what)
  const blocksize = blocksizeOption(options.blocksize, what)
  const files = expandPaths(paths, what).map((path) => plannedFile(path, statFile(path, what)))
  const scan = JSON.parse(callNativeSync(() => native.frameInferParquet(files.map((f) => f.path), columns))) as { schema: FieldSpec[]; rowGroups: [number, number][][] }
  const index = new Map(files.map((f, i) => [f.path, i]))
  const sumOf = (p: Piece[], k: 0 | 1) => p.reduce((s, piece) => s + piece.rowGroups.reduce((t, i) => t + scan.rowGroups[index.get(piece.path)!][i][k], 0), 0)
  const parts: FramePart[] = groupParquet(files, scan.rowGroups, blocksize).map((group) => {
    const [first, ...more] = group
    return {
      source: { kind: 'parquet', path: first.path, rowGroups: first.rowGroups, size: first.size, mtimeMs: first.mtimeMs, ...(more.length > 0 ? { more } : {}) },
      deps: [],
      bytes: sumOf(group, 1),
      rows: sumOf(group, 0),
    }
  })
  // Files with no rows still make a frame: one empty partition that knows its columns.
  if (parts.length === 0) parts.push({ source: { kind: 'parquet', path: files[0].path, rowGroups: [], size: files[0].size, mtimeMs: files[0].mtimeMs }, deps: [] })
  return recorded(new Frame('read-parquet', parts, scan.schema), { op: 'scan', paths, options, columns: scan.schema.map((f) => f.name) })
}
