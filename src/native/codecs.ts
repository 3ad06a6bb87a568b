import { callNative, callNativeSync, ConfigError } from '../base/errors'
import { native } from './binding'
import type { FrameInfo } from '../../index'

type Compressing = 'lz4' | 'zstd' | 'snappy' | 'zlib'
/**
 * A codec; `+shuffle` first regroups the bytes of typed values by rank, as
 * Blosc's shuffle does, which numeric arrays compress far better after.
 */
export type CodecName = 'auto' | Compressing | 'none' | `${Compressing}+shuffle`

const SHUFFLE = '+shuffle'

/** Codecs compiled into this build. 'auto' (lz4) is always accepted too, and each but 'none' with '+shuffle'. */
export function availableCodecs(): string[] {
  return native.availableCodecs()
}

/** The shuffled variants of the codecs compiled in ('lz4+shuffle', …). */
export function shuffledCodecs(): string[] {
  return availableCodecs()
    .filter((c) => c !== 'none')
    .map((c) => c + SHUFFLE)
}

/** Every name the config accepts for `spillCompression`. */
export function validCodecNames(): string[] {
  return ['auto', ...availableCodecs(), ...shuffledCodecs()]
}

/**
 * Bytes per element of a TypedArray (the unit the shuffle regroups); 0
 * (unknown) for a Buffer, which carries bytes of anything, or a DataView.
 * An explicit `elementSize` wins.
 */
export function elementSizeOf(data: Buffer | ArrayBufferView, elementSize?: number): number {
  if (elementSize !== undefined) {
    if (!Number.isInteger(elementSize) || elementSize < 0 || elementSize > 255) {
      throw new ConfigError([{ field: 'elementSize', value: elementSize, allowed: 'a whole number of bytes from 0 (unknown) to 255' }], 'argument')
    }
    return elementSize
  }
  if (Buffer.isBuffer(data) || data instanceof DataView) return 0
  return (data as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 0
}

export function toBuffer(data: Buffer | ArrayBufferView, field = 'data'): Buffer {
  if (Buffer.isBuffer(data)) return data
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  throw new ConfigError([{ field, value: typeof data, allowed: 'a Buffer or TypedArray' }], 'argument')
}

/**
 * Compresses into a self-describing, checksummed spillway frame. A
 * '+shuffle' codec shuffles for the TypedArray's element size (or
 * `elementSize`; 8, as Blosc, for plain bytes) and records it in the frame,
 * so `decompress` needs no telling.
 */
export function compress(data: Buffer | ArrayBufferView, codec: CodecName | string = 'auto', level?: number, elementSize?: number): Promise<Buffer> {
  const buf = toBuffer(data)
  return callNative(() => callNativeSync(() => native.compress(buf, codec, level ?? undefined, elementSizeOf(data, elementSize))))
}

/**
 * `compress` on the calling thread (as lz4-napi's `compressSync`): no hop to
 * the thread pool and back, which for a few MB costs as much as the work.
 * It blocks the event loop while it runs.
 */
export function compressSync(data: Buffer | ArrayBufferView, codec: CodecName | string = 'auto', level?: number, elementSize?: number): Buffer {
  const buf = toBuffer(data)
  const size = elementSizeOf(data, elementSize)
  return callNativeSync(() => native.compressSync(buf, codec, level ?? undefined, size))
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
