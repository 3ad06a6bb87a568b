// Plans of the frame tasks that cross into JavaScript on the worker
// (mapBatches, toBag, bag.toFrame): plain data, hashed into task keys.

import type { StepFn } from './bag'
import type { FieldSpec } from './frame'

/** `frame.mapBatches`: the user's fn over the partition as an apache-arrow Table; its result checked against `schema` when given. */
export interface MapBatchesSpec {
  index: number
  call: StepFn
  schema?: FieldSpec[]
}

/** `frame.toBag`: the partition's rows as plain objects; int64 values as numbers (an unsafe one an error) or as bigints. */
export interface ToBagSpec {
  index: number
  int64: 'number' | 'bigint'
}

/** `frame.fromItems`: a bag partition's items (plain objects) as Arrow columns of `schema`, or of types inferred from them. */
export interface FromItemsSpec {
  index: number
  schema?: FieldSpec[]
}
