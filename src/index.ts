export { availableCodecs, compress, decompress, frameInfo, type CodecName } from './codecs'
export { SpillBuffer, type SpillBufferOptions, type SpillMetrics, type SpilledBytes } from './spill-buffer'
export { generateChunk, reduceChunk, combinePartials, finishPartial } from './chunks'
export {
  SpillwayError,
  ConfigError,
  InsufficientMemoryError,
  KilledWorkerError,
  ClusterClosedError,
  type ConfigProblem,
} from './errors'
