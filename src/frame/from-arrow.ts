// `frame.fromArrow(table)`: an apache-arrow Table already in the client's
// memory, cut by the core into partitions of consecutive rows that travel in
// their tasks (as bag.fromSequence's items do) and land on the workers as
// IPC bytes.

import { createHash } from 'node:crypto'
import { Table, tableToIPC, type TypeMap } from 'apache-arrow'
import { ArgumentError, callNativeSync } from '../base/errors'
import { upstreamOf } from '../bag/upstream'
import type { TaskSubmission } from '../scheduler/scheduler'
import type { FieldSpec, PartitionPlan } from '../wire/frame'
import { nativeFunction } from '../wire/functions'
import { native } from '../native/binding'
import { Frame } from './frame'
import type { NamesOf } from './typing'

export interface FromArrowOptions {
  /** Partitions of about equal rows (default: one per 64 MiB of the table's IPC bytes). */
  npartitions?: number
}

const what = 'frame.fromArrow'

/** A typed Table (`Table<{ id: Int64, … }>`) gives a frame whose columns tsc knows (`Frame<{ id: 'int64', … }>`). */
export function fromArrow<T extends TypeMap = any>(table: Table<T>, options: FromArrowOptions = {}): Frame<NamesOf<T>> {
  if (!(table instanceof Table)) throw new ArgumentError([{ field: 'table', value: table === null ? null : typeof table, allowed: "an apache-arrow Table (e.g. tableFromArrays, tableFromIPC, or a frame's computed result)" }], what)
  if (options === null || typeof options !== 'object') throw new ArgumentError([{ field: 'options', value: options, allowed: '{ npartitions }' }], what)
  const n = options.npartitions
  if (n !== undefined && !(Number.isSafeInteger(n) && n >= 1)) throw new ArgumentError([{ field: 'options.npartitions', value: n, allowed: 'an integer ≥ 1' }], what)
  const bytes = tableToIPC(table, 'stream')
  const count = n ?? Math.max(1, Math.ceil(bytes.byteLength / 2 ** 26))
  const split = callNativeSync(() => native.frameSplitIpc(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), count))
  const schema = JSON.parse(split.schema) as FieldSpec[]
  const name = `from-arrow-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}-${count}`
  // Each partition's bytes are its task's argument: the worker decodes them once and holds the result.
  const plan: PartitionPlan = { source: { kind: 'inputs' }, schema, steps: [] }
  const tasks = (): TaskSubmission[] =>
    split.parts.map((part, i) => ({ key: `${name}-${i}`, task: { fn: 'call', func: nativeFunction('frame.partition', 'from-arrow'), args: [plan, part], deps: [] }, expectedBytes: part.byteLength, deps: [], group: 'from-arrow', hold: false }))
  const parts = split.parts.map((_, i) => ({ source: { kind: 'inputs' as const }, deps: [`${name}-${i}`] }))
  return new Frame('from-arrow', parts, schema, [], schema, upstreamOf(tasks, split.parts.length))
}
