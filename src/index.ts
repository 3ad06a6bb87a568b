export { availableCodecs, compress, compressSync, decompress, decompressSync, frameInfo, shuffledCodecs, type CodecName } from './native/codecs'
export { SpillBuffer, type SpillBufferOptions, type SpillMetrics, type SpilledBytes } from './native/spill-buffer'
export { generateChunk, generateChunkSync, reduceChunk, reduceChunkSync, combinePartials, finishPartial } from './native/chunks'
export {
  SpillwayError,
  ConfigError,
  InsufficientMemoryError,
  KilledWorkerError,
  WorkerStuckError,
  ClusterClosedError,
  ERROR_CODES,
  isErrorCode,
  type SpillwayErrorCode,
  type ConfigProblem,
  type KilledWorkerContext,
} from './base/errors'
export { SetupConfig, PROFILES, WORKLOAD_TYPES, type SetupOptions, type WorkloadType, type Profile } from './config/config'
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
} from './config/resources'
export { computeMemorySpec, formatSummary, decideTopology, defaultReserveBytes, GIB, type MemorySpec, type Topology } from './config/sizing'
export { createSpillDir, resolveSpillBase, type SpillDir, type SpillBase, type SpillDirOptions } from './config/tempdir'
export { setupClient, type SetupResult, type SetupClientOptions } from './setup'
export { stderrLogger, type Logger } from './base/logger'
export { parseBytes, formatBytes, SIZE_UNITS } from './base/units'
export { Client } from './client/client'
export { Future, type FutureStatus } from './futures/future'
export { wait, type WaitOptions, type ReturnWhen } from './futures/wait'
export { asCompleted, AsCompleted, type AsCompletedOptions, type Completed } from './futures/as-completed'
export { fireAndForget } from './futures/fire-and-forget'
export type { GatherOptions } from './futures/gather-options'
export type { ScatterOptions } from './futures/scatter-options'
export { taskContext, secede, rejoin, type TaskContext } from './worker/context'
export { getClient, type TaskClient } from './futures/task-client'
export type { SubmitOptions, MapOptions } from './futures/engine'
export type { TaskFunction, ModuleRef } from './wire/functions'
export { taskModule, type TaskModule } from './futures/task-module'
export type { FunctionOf, ResultOf, Resolvable, ResolvableArgs, ArgsOf, Gathered, TaskFn, MapIterables, ScatteredArray, ScatteredObject } from './futures/typing'
export { LocalCluster } from './deploy/local-cluster'
export { random, type RandomOptions } from './array/random'
export * as bag from './bag/api'
export { Bag, BagItem, BagTake } from './bag/bag'
export * as frame from './frame/api'
export { Frame, GroupBy, type AggOptions, type FrameTable, type FrameBatch, type ColumnTypes } from './frame/frame'
export { col, lit, count, sum, mean, min, max, nUnique, first, last, std, var, Expr, Aggregate, type LitValue } from './frame/expr'
export { when, When, Then } from './frame/when'
export { ExprStr, ExprDt } from './frame/expr-str'
export { FrameSlice } from './frame/whole'
export type { FrameCsvOptions } from './frame/readers'
export type { FrameTextOptions } from './frame/read-text'
export type { MapBatchesOptions, ToBagOptions } from './frame/batches'
export type { FrameParquetOptions } from './frame/readers-parquet'
export type { FrameNdjsonOptions } from './frame/readers-ndjson'
export type { FromArrowOptions } from './frame/from-arrow'
export type { ToParquetOptions, ParquetCompression } from './frame/writers'
export { ChunkedArray, Reduction, type Dtype, type ReduceOp } from './array/array'
export { schedulerWorkers, workerInMemoryBytes, workerSpillBytes, clusterMemorySnapshot, type WorkerInfo, type MemorySnapshot } from './reporting/workers'
export { clusterReport, ClusterReport, type ClusterReportData } from './reporting/report'
export { monitor, type TimelinePoint, type MonitorResult, type MonitorOptions } from './reporting/monitor'
export { timelineChart, type ChartOptions } from './reporting/chart'
export { tuneMemoryThresholds, decideThresholds, type TuneOptions, type TuneResult, type TuneStrategy } from './reporting/tune'
export { memoryAction } from './worker/memory-policy'
export type { WorkerMetrics, Thresholds, WorkerStatus, StuckReport, StuckReason } from './wire/protocol'
export { recommendChunks, chunkBudget, type RecommendOptions } from './array/recommend'
export { startDashboard, dashboardBanner, type Dashboard, type DashboardOptions } from './dashboard/server'
export { TimelineSampler, RingBuffer, type TimelineSample, type TimelineJSON, type WorkerSample } from './dashboard/timeline'
export type { ClusterView, WorkerRow, TaskView, TaskGroup } from './dashboard/state'
export { withProgress, ProgressBar, progressEnabled, taskProgress, type ProgressBarOptions, type WithProgressOptions, type ProgressStream } from './client/progress'
export type { ClientOptions } from './client/client'
export type { ProgressOption } from './client/progress'
export type { FrameComputeOptions } from './client/compute-options'
export type { IterateOptions, IterateItem } from './client/iterate'
export type { KeyLike, WorkersOption } from './client/cluster-ops'
export type { RetireOptions, RetireReport } from './scheduler/retire'
export type { RebalanceResult } from './scheduler/rebalance'
export { clusterView } from './dashboard/state'
export { renderMetrics, PROMETHEUS_CONTENT_TYPE } from './dashboard/metrics'
export { SlurmCluster, type SlurmOptions } from './jobqueue/slurm'
export { PbsCluster, type PbsOptions } from './jobqueue/pbs'
export type { JobQueueCluster, Job } from './jobqueue/job-queue-cluster'
export type { JobQueueOptions } from './jobqueue/options'
export type { AdaptOptions } from './jobqueue/adaptive'
