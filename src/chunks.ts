import { callNative, callNativeSync } from './errors'
import { native, type Binding } from './native'
import { toBuffer } from './codecs'

/** Generates one chunk's bytes natively (for pipelines and benchmarks). */
export function generateChunk(spec: Binding.JsChunkSpec): Promise<Buffer> {
  return callNative(() => callNativeSync(() => native.generateChunk(spec)))
}

/** The reduction partial of one chunk of 'float64' or 'int64' values. */
export function reduceChunk(data: Buffer | ArrayBufferView, dtype: string, op: string): Promise<Binding.JsPartial> {
  const buf = toBuffer(data)
  return callNative(() => callNativeSync(() => native.reduceChunk(buf, dtype, op)))
}

export function combinePartials(partials: Binding.JsPartial[]): Binding.JsPartial {
  return callNativeSync(() => native.combinePartials(partials))
}

export function finishPartial(partial: Binding.JsPartial, op: string): number {
  return callNativeSync(() => native.finishPartial(partial, op))
}
