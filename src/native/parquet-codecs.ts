// Decompressors for every codec a Parquet writer of today uses (pyarrow,
// DuckDB, Polars, Spark): snappy is hyparquet's own; zstd and the two LZ4s
// are the core's (native, synchronous because hyparquet calls its
// decompressors synchronously, one page of about a MiB at a time); gzip and
// brotli are Node's zlib. Compressors of the same codecs, for the writer.

import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib'
import { callNativeSync } from '../base/errors'
import { native } from './binding'

type Codec = 'GZIP' | 'BROTLI' | 'ZSTD' | 'LZ4' | 'LZ4_RAW'

function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

function block(bytes: Uint8Array, codec: 'zstd' | 'lz4', decodedLength: number): Buffer {
  return callNativeSync(() => native.decompressBlockSync(bufferOf(bytes), codec, decodedLength))
}

/**
 * Parquet's LZ4 (the deprecated codec) as Hadoop wrote it: blocks each
 * after a big-endian decoded length and compressed length. Undefined when
 * the bytes are not so framed, as Arrow's Lz4HadoopCodec tells it: some
 * older writers (parquet-cpp before Arrow 0.17) put one raw LZ4 block there.
 */
function lz4Hadoop(input: Buffer, outputLength: number): Buffer | undefined {
  const out = Buffer.allocUnsafe(outputLength)
  let ip = 0
  let op = 0
  while (input.length - ip >= 8) {
    const decoded = input.readUInt32BE(ip)
    const compressed = input.readUInt32BE(ip + 4)
    ip += 8
    if (compressed > input.length - ip || decoded > outputLength - op) return undefined
    try {
      out.set(block(input.subarray(ip, ip + compressed), 'lz4', decoded), op)
    } catch {
      return undefined
    }
    ip += compressed
    op += decoded
  }
  return ip === input.length && op === outputLength ? out : undefined
}

/** hyparquet's `compressors`: each takes a page's bytes and its decoded length. */
export const PARQUET_DECOMPRESSORS: Record<Codec, (input: Uint8Array, outputLength: number) => Uint8Array> = {
  GZIP: (input, n) => gunzipSync(input, { maxOutputLength: Math.max(1, n) }),
  BROTLI: (input, n) => brotliDecompressSync(input, { maxOutputLength: Math.max(1, n) }),
  ZSTD: (input, n) => block(input, 'zstd', n),
  LZ4_RAW: (input, n) => block(input, 'lz4', n),
  LZ4: (input, n) => lz4Hadoop(bufferOf(input), n) ?? block(input, 'lz4', n),
}

function hadoopFramed(raw: Buffer, input: Uint8Array): Buffer {
  const head = Buffer.allocUnsafe(8)
  head.writeUInt32BE(input.length, 0)
  head.writeUInt32BE(raw.length, 4)
  return Buffer.concat([head, raw])
}

/** hyparquet-writer's `compressors` for the codecs it lacks (it has snappy). */
export const PARQUET_COMPRESSORS: Record<Codec, (input: Uint8Array) => Uint8Array> = {
  GZIP: (input) => gzipSync(input),
  BROTLI: (input) => brotliCompressSync(input),
  ZSTD: (input) => callNativeSync(() => native.compressBlockSync(bufferOf(input), 'zstd')),
  LZ4_RAW: (input) => callNativeSync(() => native.compressBlockSync(bufferOf(input), 'lz4')),
  // Hadoop's framing, as Arrow writes the LZ4 codec (one block: a page is far under its 2 GiB bound).
  LZ4: (input) => hadoopFramed(callNativeSync(() => native.compressBlockSync(bufferOf(input), 'lz4')), input),
}
