// `import { frame } from 'spillway'`: the readers and the collection's types.

export { Frame, GroupBy, type AggOptions, type FrameTable } from './frame'
export { readCsv, type FrameCsvOptions } from './readers'
export { readParquet, type FrameParquetOptions } from './readers-parquet'
export { readNdjson, type FrameNdjsonOptions } from './readers-ndjson'
export { fromArrow, type FromArrowOptions } from './from-arrow'
