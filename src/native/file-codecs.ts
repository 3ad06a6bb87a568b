// Standard compressed files (a user's .gz, .zst and .lz4), for the bag
// readers and writers: gzip through Node's zlib, zstd and LZ4 frame streams
// through the core, all off the JS thread.

import { promisify } from 'node:util'
import { gunzip, gzip } from 'node:zlib'
import { callNative } from '../base/errors'
import { native } from './binding'

export type FileCompression = 'gzip' | 'zstd' | 'lz4'
export const FILE_COMPRESSIONS: readonly FileCompression[] = ['gzip', 'zstd', 'lz4']

const gunzipAsync = promisify(gunzip)
const gzipAsync = promisify(gzip)

/** The compression a file's name says it has (.gz, .zst, .lz4), or undefined. */
export function compressionOfName(path: string): FileCompression | undefined {
  if (/\.gz$/i.test(path)) return 'gzip'
  if (/\.zst$/i.test(path)) return 'zstd'
  if (/\.lz4$/i.test(path)) return 'lz4'
  return undefined
}

export function decompressFile(data: Buffer, format: FileCompression): Promise<Buffer> {
  if (format === 'gzip') return gunzipAsync(data)
  return callNative(() => native.decompressFile(data, format))
}

/**
 * The content of a compressed file, refused past `limit` bytes: every
 * format stops as soon as its output passes it (a bomb is never inflated
 * whole). gzip fails with ERR_BUFFER_TOO_LARGE, zstd and lz4 with
 * ERR_SPILLWAY_TOO_LARGE.
 */
export function decompressBounded(data: Buffer, format: FileCompression, limit: number): Promise<Buffer> {
  const bounded = Number.isFinite(limit)
  if (format === 'gzip') return gunzipAsync(data, bounded ? { maxOutputLength: Math.max(1, limit) } : {})
  return callNative(() => native.decompressFile(data, format, bounded ? Math.max(0, Math.floor(limit)) : undefined))
}

export function compressFile(data: Buffer, format: FileCompression): Promise<Buffer> {
  if (format === 'gzip') return gzipAsync(data)
  return callNative(() => native.compressFile(data, format))
}
