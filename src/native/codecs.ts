import { callNative, callNativeSync, ConfigError } from '../base/errors'
import { native } from './binding'
import type { FrameInfo } from '../../index'

export type CodecName = 'auto' | 'lz4' | 'zstd' | 'snappy' | 'zlib' | 'none'

/** Codecs compiled into this build. 'auto' (lz4) is always accepted too. */
export function availableCodecs(): string[] {
  return native.availableCodecs()
}

/** Every name the config accepts for `spillCompression`. */
export function validCodecNames(): string[] {
  return ['auto', ...availableCodecs()]
}

export function toBuffer(data: Buffer | ArrayBufferView, field = 'data'): Buffer {
  if (Buffer.isBuffer(data)) return data
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  throw new ConfigError([{ field, value: typeof data, allowed: 'a Buffer or TypedArray' }], 'argument')
}

/** Compresses into a self-describing, checksummed spillway frame. */
export function compress(data: Buffer | ArrayBufferView, codec: CodecName | string = 'auto', level?: number): Promise<Buffer> {
  const buf = toBuffer(data)
  return callNative(() => callNativeSync(() => native.compress(buf, codec, level ?? undefined)))
}

/**
 * `compress` on the calling thread (as lz4-napi's `compressSync`): no hop to
 * the thread pool and back, which for a few MB costs as much as the work.
 * It blocks the event loop while it runs.
 */
export function compressSync(data: Buffer | ArrayBufferView, codec: CodecName | string = 'auto', level?: number): Buffer {
  const buf = toBuffer(data)
  return callNativeSync(() => native.compressSync(buf, codec, level ?? undefined))
}

/** `decompress` on the calling thread; blocks the event loop while it runs. */
export function decompressSync(data: Buffer | ArrayBufferView): Buffer {
  const buf = toBuffer(data)
  return callNativeSync(() => native.decompressSync(buf))
}

/** Verifies and decodes a frame made by `compress` or the SpillBuffer. */
export function decompress(data: Buffer | ArrayBufferView): Promise<Buffer> {
  const buf = toBuffer(data)
  return callNative(() => native.decompress(buf))
}

export function frameInfo(data: Buffer | ArrayBufferView): FrameInfo {
  return callNativeSync(() => native.frameInfo(toBuffer(data)))
}
