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
export { SetupConfig, PROFILES, WORKLOAD_TYPES, type SetupOptions, type WorkloadType, type Profile } from './config'
export {
  detectResources,
  resolveResources,
  readCgroupLimits,
  systemSnapshot,
  batchLimits,
  parseBatchMemory,
  parseBatchCpus,
  type Resources,
  type ResourceLimits,
  type ResourceSource,
  type SystemSnapshot,
  type CgroupLimits,
} from './resources'
export { computeMemorySpec, formatSummary, decideTopology, defaultReserveBytes, GIB, type MemorySpec, type Topology } from './sizing'
export { createSpillDir, resolveSpillBase, type SpillDir, type SpillBase, type SpillDirOptions } from './tempdir'
