// glibc malloc's thresholds for a worker, by its memory limit. Workers keep
// Dask's 64 KiB thresholds (every larger chunk mapped fresh and unmapped when
// freed, so process memory falls as soon as a value is dropped) unless they
// have room to spare: then each frame task's column buffers, IPC and shard
// bytes would be faulted in page by page, task after task (a fifth of the
// sort's and the Parquet scan's profiles, 534 000 faults for a 24-file scan).
// From 1 GiB, chunks up to 8 MiB come from the heap and up to a 32nd of the
// limit stays mapped for the next task (an eighth, with 32 MiB chunks: the
// 600 MB group-by once took 180 s instead of 19, not analysed; memory kept
// per malloc arena is the likely cause). Below 1 GiB (a 160 MiB worker of
// frame-big-groupby has 25 MiB to spare) any kept memory is past the limit.
// What the heap keeps counts in the process memory the thresholds and the
// nanny measure, so the worker gives it back (malloc_trim) before it spills,
// pauses or passes terminate (memory-monitor.ts, heap-trim.ts).
// Thresholds set in the environment that starts the cluster win (glibc's own
// variables, as a user would set them for any process).

const GiB = 2 ** 30
const MiB = 2 ** 20
const NAMES = ['MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_'] as const

export function mallocEnv(memoryLimit: number, inherited: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = memoryLimit >= GiB ? { MALLOC_MMAP_THRESHOLD_: String(8 * MiB), MALLOC_TRIM_THRESHOLD_: String(Math.floor(memoryLimit / 32)) } : {}
  for (const name of NAMES) if (inherited[name] !== undefined) env[name] = inherited[name]!
  return env
}
