// Every spec of __test__/ in exactly one lane (lanes.spec.ts checks it).
//
//   unit     no cluster (a CLI or a browser at most): `npm test`, four files at once
//   cluster  real clusters, no ratio to memory: `npm test`, files side by side
//   scale    a ratio to the workers' memory (3× memory, floods, millions of
//            records, big joins and group-bys): `npm run test:scale`
//   release  the release build, the packed install, the glibc floor:
//            `npm run test:release` (with the Node matrix)
//
// A new spec goes in the first lane that fits, from the top; docs/develop.md
// says more.

export const lanes = {
  unit: [
    'allocation-units', 'architecture', 'bag-steps-units', 'binding-error', 'cli-info', 'cluster-units',
    'codec', 'config', 'dashboard', 'dashboard-browser', 'dashboard-host', 'frame-graph-units', 'frame-types',
    'futures-client-units', 'futures-units', 'heap-estimate-units', 'jobqueue', 'join-units', 'keys-units',
    'frame-plan-units', 'lanes', 'malloc-env-units', 'memory-log', 'package', 'readme-tables', 'resources', 'retire-units',
    'shard-codec', 'sizes', 'sizing', 'spill-buffer', 'spill-frames', 'stuck-units', 'types',
  ],
  cluster: [
    'abort-signal', 'async-steps', 'bag', 'bag-example', 'bag-files', 'bag-parquet-interop',
    'bag-real-files', 'cli-bench', 'client-cluster', 'cluster-errors',
    'cluster-lifecycle', 'cluster-pause', 'cluster-recovery', 'cluster-release', 'cluster-spill-loss',
    'docs-examples', 'example-regroup', 'example-tables', 'frame', 'frame-batches',
    'frame-differential', 'frame-exact', 'frame-io', 'frame-join-sort', 'frame-ops', 'frame-parquet-files', 'frame-plan', 'frame-read-quoted',
    'frame-read-types', 'frame-real-files', 'frame-visible', 'frame-zero-copy', 'futures', 'futures-client',
    'futures-errors', 'futures-recovery', 'hardening-config', 'hardening-dashboard', 'hardening-files',
    'hardening-futures', 'hardening-fuzz', 'hardening-graph', 'hardening-hangs', 'hardening-keys',
    'hardening-peer', 'hardening-restart', 'hardening-settle', 'hardening-shuffle',
    'hardening-tasks', 'heap-trim', 'iterate', 'local-cluster-defaults', 'logs', 'netns', 'progress',
    'rechunk', 'remote', 'retire', 'retire-lifetime', 'shuffle', 'shuffle-batches', 'shuffle-shapes',
    'slurm', 'spill-cap', 'spill-full', 'spill-off', 'subtasks', 'task-context', 'tempdir', 'typescript',
  ],
  scale: [
    'bag-small-files', 'bag-streams', 'compressed-stream', 'hardening-subtasks',
    'bag-memory', 'cli-demo', 'cluster-pressure', 'frame-big-groupby', 'frame-differential-scale', 'frame-big-join', 'frame-grace',
    'futures-memory', 'hardening-flood', 'hardening-spill-full', 'memory-bounds', 'shuffle-memory',
    'shuffle-small-records',
  ],
  release: ['release-build'],
}

/**
 * How many ava processes share a lane (scripts/test-lane.js starts them side
 * by side, each taking every Nth spec of the lane). Within one process files
 * run one at a time and a file's tests one at a time (ava's `serial`, which
 * also allows one file at a time): a cluster spec may start a cluster per test.
 */
export const shards = { unit: 3, cluster: 3, scale: 2, release: 1 }

/**
 * Seconds a spec took in a lane run beside others (`.ci/run`'s
 * test-timings.tsv), for the slow ones; the rest count 5. The shards are
 * balanced by these: a shard is as slow as its slowest share.
 */
const seconds = {
  'hardening-restart': 67, 'hardening-hangs': 61, 'futures-recovery': 45, 'cli-bench': 35, rechunk: 33,
  'hardening-shuffle': 31, 'client-cluster': 24, 'hardening-futures': 22, 'hardening-graph': 20, retire: 20,
  'hardening-tasks': 20, 'hardening-settle': 18, 'futures-errors': 17, 'retire-lifetime': 16, 'hardening-files': 15,
  subtasks: 14, 'spill-full': 13, remote: 12, netns: 12, futures: 12, 'cluster-recovery': 11, 'spill-off': 11,
  dashboard: 39, 'dashboard-browser': 34, architecture: 25, types: 24, 'spill-frames': 18, 'cli-info': 16,
  'frame-types': 14, jobqueue: 11, package: 11,
  // The scale lane: two shards since its specs were scaled to 256 MiB workers
  // (247 s against about 365 s in one process on 2 cores; before, when the
  // specs were bigger and CPU-bound, two took longer: 481 s against 371 s).
  'frame-big-join': 60, 'frame-differential-scale': 45, 'frame-big-groupby': 37, 'shuffle-memory': 32,
  'cli-demo': 26, 'bag-memory': 25, 'futures-memory': 24, 'hardening-subtasks': 24, 'bag-small-files': 18,
  'bag-streams': 13, 'hardening-spill-full': 12, 'shuffle-small-records': 11, 'compressed-stream': 10,
  'memory-bounds': 10, 'frame-grace': 9, 'cluster-pressure': 6, 'hardening-flood': 5,
}

/**
 * This process's part of a lane, from SPILLWAY_TEST_SHARD=`i/N` (i from 0);
 * all of it without one. The slowest spec first, each to the shard with the
 * least so far (the same split in every process: ties go by name).
 */
function shardOf(specs, shard = process.env.SPILLWAY_TEST_SHARD) {
  if (shard === undefined || shard === '') return specs
  const m = /^(\d+)\/(\d+)$/.exec(shard)
  if (!m || Number(m[1]) >= Number(m[2])) throw new Error(`SPILLWAY_TEST_SHARD is ${shard}: it must be i/N with 0 <= i < N`)
  const [i, n] = [Number(m[1]), Number(m[2])]
  const load = new Array(n).fill(0)
  const mine = []
  const cost = (s) => seconds[s] ?? 5
  for (const spec of [...specs].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b))) {
    const k = load.indexOf(Math.min(...load))
    load[k] += cost(spec)
    if (k === i) mine.push(spec)
  }
  return mine
}

/** The ava settings every lane shares: TypeScript through tsx, one process per file, tests in a file one at a time. */
export function laneConfig(lane, settings = {}) {
  if (!(lane in lanes)) throw new Error(`no lane ${lane}: the lanes are ${Object.keys(lanes).join(', ')}`)
  return {
    files: shardOf(lanes[lane]).map((spec) => `__test__/${spec}.spec.ts`),
    extensions: { ts: 'commonjs' },
    nodeArguments: ['--import=tsx'],
    require: ['./__test__/lanes/timing.cjs'],
    environmentVariables: { SPILLWAY_TEST_LANE: lane },
    serial: true,
    timeout: '3m',
    workerThreads: false,
    ...settings,
  }
}
