// A frame written one file per partition (Parquet, CSV, NDJSON, Arrow IPC):
// each partition's task hands its IPC bytes to the core, which writes a
// temporary file beside the target (owner-only) and renames it over it
// (crates/core/src/frame/write.rs). The result is a bag of the paths
// written, as the bag's toTextfiles gives.

import { basename, resolve } from 'node:path'
import { ArgumentError } from '../base/errors'
import { Bag } from '../bag/bag'
import { hashOf } from '../bag/graph'
import { upstreamOf } from '../bag/upstream'
import type { TaskSubmission } from '../scheduler/scheduler'
import type { FrameWritePlan } from '../wire/frame'
import { nativeFunction } from '../wire/functions'
import { Frame } from './frame'
import { optimized } from './plan/node'

export type ParquetCompression = 'zstd' | 'snappy' | 'gzip' | 'lz4' | 'brotli' | 'none'

export interface ToParquetOptions {
  /** The codec of every column (default 'zstd'; DuckDB, Polars and pyarrow read each). */
  compression?: ParquetCompression
}

const CODECS: ParquetCompression[] = ['zstd', 'snappy', 'gzip', 'lz4', 'brotli', 'none']

/** The pattern made absolute, with one '*' in its file name (checked after '..' is resolved). */
function patternOf(pattern: unknown, what: string): string {
  const full = typeof pattern === 'string' ? resolve(pattern) : ''
  if (typeof pattern !== 'string' || full.split('*').length !== 2 || !basename(full).includes('*')) {
    throw new ArgumentError([{ field: 'pattern', value: pattern, allowed: "a path with one '*' in its file name, where each partition's index goes, e.g. '/out/part-*.parquet' (not in a directory, nor one that '..' takes away)" }], what)
  }
  return full
}

function writeTask(key: string, label: string, plan: FrameWritePlan, input: string): TaskSubmission {
  return { key, task: { fn: 'call', func: nativeFunction('frame.write', label), args: [plan, null], deps: [{ key: input, path: [1] }] }, expectedBytes: 1, deps: [input], group: label, hold: false }
}

/** One task per partition of `frame`, writing it to `pattern` with '*' its index; a bag of the paths. */
export function writeFrame(written: Frame, pattern: string, format: FrameWritePlan['format'], what: string, options: ToParquetOptions = {}): Bag<string> {
  const frame = optimized(written)
  const full = patternOf(pattern, what)
  if (options === null || typeof options !== 'object') throw new ArgumentError([{ field: 'options', value: options, allowed: format === 'parquet' ? '{ compression }' : 'an object' }], what)
  let extra: { compression: string } | undefined
  if (format === 'parquet') {
    const c = options.compression ?? 'zstd'
    if (!CODECS.includes(c)) throw new ArgumentError([{ field: 'options.compression', value: c, allowed: CODECS.map((x) => `'${x}'`).join(', ') }], what)
    extra = { compression: c }
  }
  const label = `to-${format === 'ipc' ? 'arrow-ipc' : format}`
  const name = `${label}-${hashOf(frame.name, full, format, extra ?? null)}`
  const inputs = frame.keys()
  const make = () => [...frame.tasks(false), ...inputs.map((k, i) => writeTask(`${name}-w${i}`, label, { path: full.replace('*', String(i)), format, ...extra } as FrameWritePlan, k))]
  const upstream = upstreamOf(make, frame.taskCount() + inputs.length)
  return new Bag<string>(label, inputs.map((_, i) => ({ source: { kind: 'inputs' }, deps: [`${name}-w${i}`] })), [], upstream)
}

// The writers join Frame here, not in frame.ts: this file makes Frames' write
// tasks from a Frame, so frame.ts importing it would be a circle. Loaded with
// the package (frame/api.ts).
declare module './frame' {
  interface Frame<S = any> {
    /** Writes each partition to `pattern` ('*' its index) as Parquet (default zstd); `client.compute` of the result writes and gives the paths. */
    toParquet(pattern: string, options?: ToParquetOptions): Bag<string>
    /** As toParquet, as CSV with a header (flat columns only). */
    toCsv(pattern: string): Bag<string>
    /** As toParquet, one JSON object a line. */
    toNdjson(pattern: string): Bag<string>
    /** As toParquet, Arrow IPC files (Feather v2; '.arrow'). */
    toArrowIpc(pattern: string): Bag<string>
  }
}

Frame.prototype.toParquet = function (this: Frame, pattern: string, options: ToParquetOptions = {}) {
  return writeFrame(this, pattern, 'parquet', 'toParquet', options)
}
Frame.prototype.toCsv = function (this: Frame, pattern: string) {
  return writeFrame(this, pattern, 'csv', 'toCsv')
}
Frame.prototype.toNdjson = function (this: Frame, pattern: string) {
  return writeFrame(this, pattern, 'ndjson', 'toNdjson')
}
Frame.prototype.toArrowIpc = function (this: Frame, pattern: string) {
  return writeFrame(this, pattern, 'ipc', 'toArrowIpc')
}
