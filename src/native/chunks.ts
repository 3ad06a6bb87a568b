import { ArgumentError, callNative, callNativeSync, type ConfigProblem } from '../base/errors'
import { native, type Binding } from './binding'
import { toBuffer } from './codecs'

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isCount = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

// Types only, plus the whole-number rules napi would otherwise truncate or report without a field;
// the binding still checks the names (kind, dtype, op) and randint's bounds, under the same code.
function specProblems(spec: unknown): ConfigProblem[] {
  if (!isPlain(spec)) return [{ field: 'spec', value: spec, allowed: "an object { kind: 'random' | 'randint', seed, chunkId, len, low?, high? }" }]
  const problems: ConfigProblem[] = []
  if (typeof spec.kind !== 'string') problems.push({ field: 'spec.kind', value: spec.kind, allowed: "'random' or 'randint'" })
  for (const f of ['seed', 'chunkId', 'len']) {
    if (!isCount(spec[f])) problems.push({ field: `spec.${f}`, value: spec[f], allowed: 'a non-negative safe integer' })
  }
  for (const f of ['low', 'high']) {
    const v = spec[f]
    if (v !== undefined && v !== null && !Number.isSafeInteger(v)) problems.push({ field: `spec.${f}`, value: v, allowed: 'a safe integer (randint bounds)' })
  }
  return problems
}

/** Throws one ArgumentError listing every bad field of a chunk spec. */
export function checkSpec(spec: unknown, what: string): void {
  const problems = specProblems(spec)
  if (problems.length) throw new ArgumentError(problems, what)
}

/** Throws one ArgumentError when dtype or op is not even a name. */
export function checkReduce(dtype: unknown, op: unknown, what: string): void {
  const problems: ConfigProblem[] = []
  if (typeof dtype !== 'string') problems.push({ field: 'dtype', value: dtype, allowed: "'float64' or 'int64'" })
  if (typeof op !== 'string') problems.push({ field: 'op', value: op, allowed: "'sum', 'mean', 'min', 'max', 'var', 'std' or 'count'" })
  if (problems.length) throw new ArgumentError(problems, what)
}

/** Generates one chunk's bytes natively (for pipelines and benchmarks). */
export async function generateChunk(spec: Binding.JsChunkSpec): Promise<Buffer> {
  checkSpec(spec, 'generateChunk arguments')
  return callNative(() => callNativeSync(() => native.generateChunk(spec)))
}

/** `generateChunk` on the calling thread: no hop to the thread pool and back. */
export function generateChunkSync(spec: Binding.JsChunkSpec): Buffer {
  checkSpec(spec, 'generateChunkSync arguments')
  return callNativeSync(() => native.generateChunkSync(spec))
}

/** The reduction partial of one chunk of 'float64' or 'int64' values. */
export async function reduceChunk(data: Buffer | ArrayBufferView, dtype: string, op: string): Promise<Binding.JsPartial> {
  checkReduce(dtype, op, 'reduceChunk arguments')
  const buf = toBuffer(data)
  return callNative(() => callNativeSync(() => native.reduceChunk(buf, dtype, op)))
}

/** `reduceChunk` on the calling thread: no hop to the thread pool and back. */
export function reduceChunkSync(data: Buffer | ArrayBufferView, dtype: string, op: string): Binding.JsPartial {
  checkReduce(dtype, op, 'reduceChunkSync arguments')
  const buf = toBuffer(data)
  return callNativeSync(() => native.reduceChunkSync(buf, dtype, op))
}

export function combinePartials(partials: Binding.JsPartial[]): Binding.JsPartial {
  return callNativeSync(() => native.combinePartials(partials))
}

export function finishPartial(partial: Binding.JsPartial, op: string): number {
  return callNativeSync(() => native.finishPartial(partial, op))
}

/**
 * An old chunk (the bytes of the box `box`) cut, off the JS thread, into
 * batches laid back to back in one buffer: each batch is `headroom` bytes
 * left for the caller, then its boxes' elements, each box row-major.
 */
export async function rechunkCut(chunk: Uint8Array, itemSize: number, box: { lo: number[]; hi: number[] }, batches: { headroom: number; boxes: { lo: number[]; hi: number[] }[] }[]): Promise<Buffer> {
  const buf = toBuffer(chunk, 'chunk')
  const flat = batches.flatMap((b) => b.boxes.flatMap((x) => [...x.lo, ...x.hi]))
  return callNative(() =>
    callNativeSync(() =>
      native.rechunkCut(
        buf,
        itemSize,
        box.lo,
        box.hi,
        flat,
        batches.map((b) => b.boxes.length),
        batches.map((b) => b.headroom),
      ),
    ),
  )
}
