// Frames from the user's files, planned on the client: the schema sampled
// from every file and unified by the core (so it is known before anything
// runs), each file cut into blocks of `blocksize` that the workers read with
// that schema (crates/core/src/frame/read.rs).

import { ArgumentError, callNativeSync, SpillwayError } from '../base/errors'
import { parseBytes } from '../base/units'
import { native } from '../native/binding'
import { compressionOfName } from '../native/file-codecs'
import type { CsvOptionsData, FieldSpec } from '../wire/frame'
import { expandPaths, plannedFile, statFile } from '../bag/readers'
import { Frame, type FramePart } from './frame'
import type { Given, PickOf } from './typing'
import { columnsOption } from './readers-parquet'
import { sniffDelimiter, uniqueNames } from './csv-sniff'

/** The types a CSV column can be read as. */
export type CsvType = 'null' | 'bool' | `${'int' | 'uint'}${8 | 16 | 32 | 64}` | 'float32' | 'float64' | 'utf8' | 'date32' | 'date64' | `timestamp[${'s' | 'ms' | 'us' | 'ns'}]`
/** A schema for readCsv or readNdjson: column names to types. */
export type ReadSchema = Record<string, CsvType>

export interface FrameCsvOptions<T extends ReadSchema = ReadSchema, C extends string = string> {
  /** The columns to keep, in this order (default: all); the others are dropped in each partition's task as its block is read. */
  columns?: C[]
  /** Bytes per partition: a number or '128 MiB' (default 64 MiB). */
  blocksize?: number | string
  /**
   * Column names to types ('int64', 'float64', 'utf8', 'bool', 'date32',
   * 'timestamp[ms]', …), used instead of inference: for every column (then
   * tsc knows the frame's columns) or some (the rest are inferred, and tsc
   * knows only those given).
   */
  schema?: T
  /** Field values read as null (default ['']); real files use 'NA', '\\N', 'null'. */
  nullValues?: string[]
  /** One character; by default sniffed from the first file (',', tab, ';' or '|'), ',' where none fits. */
  delimiter?: string
  /** One character, default '"'. */
  quote?: string
  /** Whether the first line names the columns (default true). */
  header?: boolean
  /** Bytes of each file read to infer types (default 1 MiB). */
  sampleBytes?: number | string
  /**
   * The files' text encoding, as Node names them: 'utf8' (default; a byte
   * that is not UTF-8 is ERR_SPILLWAY_READ naming file, line and column,
   * never replaced) or 'latin1' (ISO-8859-1, recoded to UTF-8 as read).
   */
  encoding?: 'utf8' | 'latin1'
  /**
   * Whether quoted values may hold line breaks (reviews, addresses): such a
   * file's blocks start at true record starts, found by one scan of the
   * whole file when the frame is built. Default: when a file's sample
   * shows one; true scans every file (a value past the sample with a line
   * break otherwise fails its block with ERR_SPILLWAY_READ pointing here);
   * false never scans.
   */
  quotedNewlines?: boolean
}

const TYPE = /^(null|bool|u?int(8|16|32|64)|float(32|64)|utf8|date(32|64)|timestamp\[(s|ms|us|ns)\])$/
const DEFAULT_BLOCKSIZE = 64 * 2 ** 20
const OPTIONS = new Set(['columns', 'blocksize', 'schema', 'nullValues', 'delimiter', 'quote', 'header', 'sampleBytes', 'encoding', 'quotedNewlines'])

const bad = (field: string, value: unknown, allowed: string) => new ArgumentError([{ field, value, allowed }], 'frame.readCsv')

function bytesOption(v: unknown, field: string, dflt: number): number {
  const n = v === undefined ? dflt : parseBytes(v)
  if (!n || n < 1) throw bad(field, v, "a positive number of bytes, or a size such as '64 MiB'")
  return n
}

function csvOptions(o: FrameCsvOptions, first: string | undefined): CsvOptionsData {
  const char = (v: unknown, field: string, dflt: string) => {
    if (v === undefined) return dflt
    if (typeof v !== 'string' || v.length !== 1 || v.charCodeAt(0) > 127) throw bad(field, v, 'one ASCII character')
    return v
  }
  const nullValues = o.nullValues ?? ['']
  if (!Array.isArray(nullValues) || !nullValues.every((v) => typeof v === 'string')) throw bad('options.nullValues', nullValues, "a list of strings, e.g. ['', 'NA']")
  if (o.header !== undefined && typeof o.header !== 'boolean') throw bad('options.header', o.header, 'true or false')
  const quote = char(o.quote, 'options.quote', '"')
  const delimiter = o.delimiter === undefined && first !== undefined ? sniffDelimiter(first, quote) : char(o.delimiter, 'options.delimiter', ',')
  const encoding = o.encoding ?? 'utf8'
  if (encoding !== 'utf8' && encoding !== 'latin1') throw bad('options.encoding', encoding, "'utf8' or 'latin1'")
  return { delimiter, quote, nullValues, header: o.header ?? true, encoding }
}

const TYPES = "a type: 'bool', 'int8'…'int64', 'uint8'…'uint64', 'float32', 'float64', 'utf8', 'date32', 'date64', 'timestamp[s|ms|us|ns]'"

/** The names a schema types, each type checked (before any file is read). */
export function givenNames(given: Record<string, string> | undefined, what: string): string[] {
  const bad = (field: string, value: unknown, allowed: string) => new ArgumentError([{ field, value, allowed }], what)
  if (given === undefined) return []
  if (given === null || typeof given !== 'object' || Array.isArray(given)) throw bad('options.schema', given, "an object of column names to types, e.g. { id: 'int64', name: 'utf8' }")
  for (const [name, type] of Object.entries(given)) if (typeof type !== 'string' || !TYPE.test(type)) throw bad(`options.schema.${name}`, type, TYPES)
  return Object.keys(given)
}

/** The inferred schema with the user's types in place of those they gave, every name they gave checked. */
export function withGivenTypes(inferred: FieldSpec[], given: Record<string, string> | undefined, what = 'frame.readCsv'): FieldSpec[] {
  givenNames(given, what)
  if (given === undefined) return inferred
  for (const name of Object.keys(given)) {
    if (!inferred.some((f) => f.name === name)) {
      throw new SpillwayError('ERR_SPILLWAY_COLUMN_NOT_FOUND', `${what}: options.schema names column ${JSON.stringify(name)}, which the files do not have; their columns are ${inferred.map((f) => JSON.stringify(f.name)).join(', ')}`, { column: name })
    }
  }
  return inferred.map((f) => (given[f.name] === undefined ? f : { ...f, type: given[f.name] }))
}

/** A file's block starts at record starts, or null where cuts at line ends will do (crates/core/src/frame/csv_bounds.rs). */
function recordStarts(path: string, opts: CsvOptionsData, blocksize: number, sampleBytes: number, force: boolean): number[] | null {
  return callNativeSync(() => native.frameCsvBlockStarts(path, JSON.stringify(opts), blocksize, sampleBytes, force))
}

/**
 * A frame of CSV files (a path, a glob or a list): types inferred from the
 * first `sampleBytes` of every file and unified across them (integers and
 * floats make float64, a date and a timestamp a timestamp, anything and
 * text text; other mixes are ERR_SPILLWAY_READ naming both files), or given
 * in `schema`, which also types the frame for tsc. The delimiter, unless
 * given, is sniffed from the first file; a repeated column name is renamed
 * `name_1`, `name_2`… as DuckDB does. Each file
 * is cut into blocks of `blocksize` at line ends, or at record ends where
 * quoted values hold line breaks (`quotedNewlines`).
 */
export function readCsv<const T extends ReadSchema = any, const C extends string = string>(paths: string | string[], options: FrameCsvOptions<T, C> = {}): Frame<[string] extends [C] ? Given<T> : PickOf<Given<T>, C>> {
  if (options === null || typeof options !== 'object') throw bad('options', options, `an object { ${[...OPTIONS].join(', ')} }`)
  for (const k of Object.keys(options)) if (!OPTIONS.has(k)) throw bad(`options.${k}`, (options as any)[k], `one of ${[...OPTIONS].join(', ')}`)
  const blocksize = bytesOption(options.blocksize, 'options.blocksize', DEFAULT_BLOCKSIZE)
  const sampleBytes = bytesOption(options.sampleBytes, 'options.sampleBytes', 2 ** 20)
  const quotedNewlines = options.quotedNewlines
  if (quotedNewlines !== undefined && typeof quotedNewlines !== 'boolean') throw bad('options.quotedNewlines', quotedNewlines, 'true (scan every file for record starts), false (never) or undefined (default: where the sample shows a quoted line break)')
  // Typed columns are not unified across files (their type is the user's); checked before any file is read.
  const given = givenNames(options.schema, 'frame.readCsv')
  const files = expandPaths(paths, 'frame.readCsv').map((path) => plannedFile(path, statFile(path, 'frame.readCsv')))
  const opts = csvOptions(options, files.find((f) => f.size > 0)?.path)
  const sampled = JSON.parse(callNativeSync(() => native.frameInferCsv(files.map((f) => f.path), JSON.stringify({ ...opts, given }), sampleBytes))) as FieldSpec[]
  // The workers read by position, so a repeated header name renamed here is renamed there too.
  const names = uniqueNames(sampled.map((f) => f.name))
  const inferred = sampled.map((f, i) => (f.name === names[i] ? f : { ...f, name: names[i] }))
  const fields = withGivenTypes(inferred, options.schema)
  const parts: FramePart[] = []
  for (const f of files) {
    const { path, size, mtimeMs } = f
    // A compressed file is one partition, streamed by the core (its blocks cannot be found without decoding).
    const compressed = compressionOfName(path) !== undefined
    const exact = quotedNewlines === false || compressed ? null : recordStarts(path, opts, blocksize, sampleBytes, quotedNewlines === true)
    if (exact) {
      // Blocks at record starts: a cut at a line end could fall inside a quoted value.
      exact.forEach((start, k) => parts.push({ source: { kind: 'csv', path, start, end: exact[k + 1] ?? size, size, mtimeMs, options: opts, exact: true }, deps: [] }))
      continue
    }
    const step = compressed ? Infinity : blocksize
    for (let start = 0; start < size || start === 0; start += step) {
      parts.push({ source: { kind: 'csv', path, start, end: Math.min(size, start + blocksize), size, mtimeMs, options: opts }, deps: [] })
    }
  }
  const all = new Frame('read-csv', parts, fields)
  const columns = columnsOption(options.columns, 'frame.readCsv')
  return columns ? all.select(...columns) : all
}
