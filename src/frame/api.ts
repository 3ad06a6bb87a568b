// `import { frame } from 'spillway'`: the readers and the collection's types.

// Adds mapBatches, toBag, materialized and release to Frame, toFrame to Bag.
import './batches'
// Adds agg to GroupBy (its tree or its shuffle).
import './group-by'
// Adds join, sortBy and shuffle to Frame.
import './relational'
// Adds toParquet, toCsv, toNdjson and toArrowIpc to Frame.
import './writers'
// The optimizer and lowering behind client.compute and frame.explain().
import './plan/lower'
export { Frame, GroupBy, type AggOptions, type FrameTable, type FrameBatch, type ColumnTypes } from './frame'
export { readCsv, type FrameCsvOptions, type CsvType, type ReadSchema } from './readers'
export type { MapBatchesOptions, ToBagOptions } from './batches'
export { readText, type FrameTextOptions } from './read-text'
export { readParquet, type FrameParquetOptions } from './readers-parquet'
export { readNdjson, type FrameNdjsonOptions } from './readers-ndjson'
export { fromArrow, type FromArrowOptions } from './from-arrow'
