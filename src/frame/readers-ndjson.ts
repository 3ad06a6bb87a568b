// Frames of NDJSON files, planned on the client as CSV's are: types inferred
// by the core from a sample of every file and unified across them (objects
// become structs, arrays lists, numbers and text in one key text), each file
// cut into blocks at line ends that the workers decode with arrow-json
// (crates/core/src/frame/read_ndjson.rs).

import { callNativeSync } from '../base/errors'
import { parseBytes } from '../base/units'
import { ArgumentError } from '../base/errors'
import { native } from '../native/binding'
import { compressionOfName } from '../native/file-codecs'
import type { FieldSpec } from '../wire/frame'
import { expandPaths, plannedFile, statFile } from '../bag/readers'
import { Frame, type FramePart } from './frame'
import { withGivenTypes, type ReadSchema } from './readers'
import type { Given } from './typing'
import { blocksizeOption, checkOptions, columnsOption } from './readers-parquet'

export interface FrameNdjsonOptions<T extends ReadSchema = ReadSchema> {
  /** The keys to read, as columns in this order (default: every key of the sampled lines). */
  columns?: string[]
  /** Column names to flat types ('int64', 'float64', 'utf8', 'bool', 'timestamp[ms]', …) for some or all columns, the rest inferred; tsc knows the frame's columns as those given. */
  schema?: T
  /** Bytes per partition: a number or '128 MiB' (default 64 MiB). */
  blocksize?: number | string
  /** Bytes of each file read to infer types (default 1 MiB). */
  sampleBytes?: number | string
}

const OPTIONS = new Set(['columns', 'schema', 'blocksize', 'sampleBytes'])

/**
 * A frame of newline-delimited JSON files (a path, a glob or a list), one
 * object per line; a key missing from a line is null there. A value that
 * does not fit its column's type fails its partition with ERR_SPILLWAY_READ
 * naming the file, the line and the column.
 */
export function readNdjson<const T extends ReadSchema = any>(paths: string | string[], options: FrameNdjsonOptions<T> = {}): Frame<Given<T>> {
  const what = 'frame.readNdjson'
  checkOptions(options, OPTIONS, what)
  const columns = columnsOption(options.columns, what)
  const blocksize = blocksizeOption(options.blocksize, what)
  const sampleBytes = options.sampleBytes === undefined ? 2 ** 20 : parseBytes(options.sampleBytes)
  if (!sampleBytes || sampleBytes < 1) throw new ArgumentError([{ field: 'options.sampleBytes', value: options.sampleBytes, allowed: "a positive number of bytes, or a size such as '1 MiB'" }], what)
  const files = expandPaths(paths, what).map((path) => plannedFile(path, statFile(path, what)))
  const inferred = JSON.parse(callNativeSync(() => native.frameInferNdjson(files.map((f) => f.path), columns, sampleBytes))) as FieldSpec[]
  const fields = withGivenTypes(inferred, options.schema, what)
  const parts: FramePart[] = []
  for (const { path, size, mtimeMs } of files) {
    // A compressed file is one partition, streamed by the core (its blocks cannot be found without decoding).
    const step = compressionOfName(path) ? Infinity : blocksize
    for (let start = 0; start < size || start === 0; start += step) {
      parts.push({ source: { kind: 'ndjson', path, start, end: Math.min(size, start + blocksize), size, mtimeMs }, deps: [] })
    }
  }
  return new Frame('read-ndjson', parts, fields)
}
