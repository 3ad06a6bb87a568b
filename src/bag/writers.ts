// The writers' options, checked on the client: the '*' pattern each
// partition's index goes into, the compression, and toCsv's format.

import { basename, resolve } from 'node:path'
import { ArgumentError } from '../base/errors'
import { compressionOfName } from '../native/file-codecs'
import type { Compression, Step } from '../wire/bag'

export type WriteCompression = 'infer' | 'gzip' | 'zstd' | 'lz4' | 'none'

export interface ToCsvOptions {
  /** 'infer' (default: by the name, .gz, .zst, .lz4), 'gzip', 'zstd', 'lz4' or 'none'. */
  compression?: WriteCompression
  /** The columns, in order (default: the first record's keys, in its order). */
  columns?: string[]
  /** A header line of the column names (default true). */
  header?: boolean
  /** Default ','. */
  delimiter?: string
}

function bad(field: string, value: unknown, allowed: string, what: string): ArgumentError {
  return new ArgumentError([{ field, value, allowed }], what)
}

/** The resolved pattern, checked on the resolved path: '..' after a '*' would send every partition to one file. */
function writePattern(pattern: unknown, what: string): string {
  const full = typeof pattern === 'string' ? resolve(pattern) : ''
  if (typeof pattern !== 'string' || full.split('*').length !== 2 || !basename(full).includes('*')) {
    throw bad('pattern', pattern, "a path with one '*' in its file name, where each partition's index goes, e.g. '/out/part-*.txt' (not in a directory, nor one that '..' takes away)", what)
  }
  return full
}

function compressionOf(pattern: string, c: unknown, what: string): Compression {
  const v = c ?? 'infer'
  if (!['infer', 'gzip', 'zstd', 'lz4', 'none'].includes(v as string)) throw bad('options.compression', v, "'infer', 'gzip', 'zstd', 'lz4' or 'none'", what)
  return v === 'infer' ? compressionOfName(pattern) : v === 'none' ? undefined : (v as Compression)
}

export function textfilesStep(pattern: unknown, options: { compression?: WriteCompression }): Step {
  const full = writePattern(pattern, 'toTextfiles')
  return { op: 'write', pattern: full, compression: compressionOf(full, options.compression, 'toTextfiles') }
}

const CSV_OPTIONS = new Set(['compression', 'columns', 'header', 'delimiter'])

export function csvStep(pattern: unknown, options: ToCsvOptions): Step {
  const what = 'toCsv'
  if (options === null || typeof options !== 'object') throw bad('options', options, `an object { ${[...CSV_OPTIONS].join(', ')} }`, what)
  for (const k of Object.keys(options)) if (!CSV_OPTIONS.has(k)) throw bad(`options.${k}`, (options as any)[k], `one of ${[...CSV_OPTIONS].join(', ')}`, what)
  const full = writePattern(pattern, what)
  const { columns } = options
  if (columns !== undefined && !(Array.isArray(columns) && columns.length > 0 && columns.every((c) => typeof c === 'string'))) throw bad('options.columns', columns, 'a non-empty array of column names', what)
  const header = options.header ?? true
  if (typeof header !== 'boolean') throw bad('options.header', header, 'true (default) or false', what)
  const delimiter = options.delimiter ?? ','
  if (typeof delimiter !== 'string' || delimiter.length === 0 || /["\r\n]/.test(delimiter)) throw bad('options.delimiter', delimiter, 'a non-empty string without a quote or a newline', what)
  return { op: 'write', pattern: full, compression: compressionOf(full, options.compression, what), csv: { header, delimiter, ...(columns ? { columns } : {}) } }
}

export interface ToParquetOptions {
  /** The columns, in order (default: the first record's keys). */
  columns?: string[]
  /** 'SNAPPY' (default), 'ZSTD', 'GZIP', 'BROTLI', 'LZ4_RAW' or 'UNCOMPRESSED'. */
  codec?: 'SNAPPY' | 'ZSTD' | 'GZIP' | 'BROTLI' | 'LZ4_RAW' | 'UNCOMPRESSED'
  /** Rows per row group (default: hyparquet-writer's, from 1 000 growing to 100 000). */
  rowGroupSize?: number
}

const PARQUET_OPTIONS = new Set(['columns', 'codec', 'rowGroupSize'])
const WRITE_CODECS = ['SNAPPY', 'ZSTD', 'GZIP', 'BROTLI', 'LZ4_RAW', 'UNCOMPRESSED']

export function parquetStep(pattern: unknown, options: ToParquetOptions): Step {
  const what = 'toParquet'
  if (options === null || typeof options !== 'object') throw bad('options', options, `an object { ${[...PARQUET_OPTIONS].join(', ')} }`, what)
  for (const k of Object.keys(options)) if (!PARQUET_OPTIONS.has(k)) throw bad(`options.${k}`, (options as any)[k], `one of ${[...PARQUET_OPTIONS].join(', ')}`, what)
  const full = writePattern(pattern, what)
  const { columns, rowGroupSize } = options
  if (columns !== undefined && !(Array.isArray(columns) && columns.length > 0 && columns.every((c) => typeof c === 'string'))) throw bad('options.columns', columns, 'a non-empty array of column names', what)
  const codec = options.codec ?? 'SNAPPY'
  if (!WRITE_CODECS.includes(codec)) throw bad('options.codec', codec, WRITE_CODECS.map((c) => `'${c}'`).join(', '), what)
  if (rowGroupSize !== undefined && !(Number.isSafeInteger(rowGroupSize) && rowGroupSize >= 1)) throw bad('options.rowGroupSize', rowGroupSize, 'a positive integer (rows)', what)
  // The write's column types come as the task's first broadcast input (bag.toParquet adds it).
  return { op: 'write', pattern: full, compression: undefined, parquet: { codec, ...(columns ? { columns } : {}), ...(rowGroupSize ? { rowGroupSize } : {}), schemaInput: 0 } }
}
