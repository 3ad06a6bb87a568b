// `import { bag } from 'spillway'`: the readers and the collection's types.

export { Bag, BagItem, BagTake, type ItemsOf, type KeyOf, type ReductionOptions, type StepOptions } from './bag'
export { readText, fromSequence, type ReadTextOptions, type FromSequenceOptions } from './readers'
export { readCsv, readParquet, type ReadCsvOptions, type ReadParquetOptions } from './readers-tabular'
export { fromAsyncIterable, type FromAsyncIterableOptions, type ScatterTarget, type StreamSource } from './stream-source'
export type { ToCsvOptions, ToParquetOptions } from './writers'
