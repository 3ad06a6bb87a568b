import test from 'ava'
import {
  computeMemorySpec,
  decideTopology,
  defaultReserveBytes,
  formatSummary,
  GIB,
  InsufficientMemoryError,
  resolveResources,
  SetupConfig,
  type Resources,
  type SetupOptions,
  type SystemSnapshot,
} from 'spillway'

function system(ramGib: number, cores: number): SystemSnapshot {
  const total = Math.round(ramGib * GIB)
  return {
    totalMemoryBytes: total,
    availableMemoryBytes: total,
    usedMemoryBytes: 0,
    freeMemoryBytes: total,
    swapTotalBytes: 0,
    swapUsedBytes: 0,
    swapFreeBytes: 0,
    physicalCores: cores,
    logicalCores: cores,
  }
}

function machine(ramGib: number, cores: number, env: NodeJS.ProcessEnv = {}): Resources {
  return resolveResources(system(ramGib, cores), {}, env)
}

function spec(options: SetupOptions, resources: Resources) {
  return computeMemorySpec(new SetupConfig(options), resources)
}

test('the recipe\'s pressure test: 15.6 GiB, maxMemGb 3, reserve 1, 2 cpu workers → exactly 1 GiB each', (t) => {
  const s = spec({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false }, machine(15.61, 4))
  t.is(s.perWorkerBytes, 2 ** 30)
  t.like(s, { nWorkers: 2, threadsPerWorker: 1, processes: true, workloadType: 'cpu', maxBytes: 3 * GIB, reserveBytes: GIB, usableBytes: 2 * GIB })
  t.is(s.reducedWorkers, undefined)
  t.is(
    formatSummary(s, { spillDir: '/tmp/spillway-2592', spillCompression: 'auto', commCompression: false }),
    [
      '[spillway] Configuration summary',
      'temp/spill dir: /tmp/spillway-2592',
      'Workers: 2 | threads/worker: 1 | processes: True',
      'Memory: total ~15.6 GiB | usable ~2.0 GiB | per-worker ~1.0 GiB',
      'Compression: spill=auto | comm=False',
    ].join('\n'),
  )
})

test('unset reserve is 20% of RAM clamped to 4–50 GiB', (t) => {
  const cases: [number, number][] = [
    [8, 4],
    [16, 4], // 3.2 → clamped up
    [20, 4],
    [64, 12.8],
    [250, 50],
    [300, 50], // 60 → clamped down
    [1536, 50],
  ]
  for (const [ram, reserve] of cases) {
    t.is(defaultReserveBytes(ram * GIB), reserve * GIB, `${ram} GiB`)
    const s = spec({ workloadType: 'cpu' }, machine(ram, 4))
    t.is(s.reserveBytes, reserve * GIB)
    t.is(s.usableBytes, (ram - reserve) * GIB, `usable = RAM − reserve on ${ram} GiB`)
  }
})

const table: { name: string; ram: number; cores: number; env?: NodeJS.ProcessEnv; options: SetupOptions; expect: Record<string, unknown> }[] = [
  {
    name: '16 GiB laptop, defaults (io): one in-process worker with 4 threads and all usable memory',
    ram: 16,
    cores: 4,
    options: {},
    expect: { nWorkers: 1, threadsPerWorker: 4, processes: false, workloadType: 'io', usableBytes: 12 * GIB, perWorkerBytes: 12 * GIB },
  },
  {
    name: '16 GiB laptop, cpu: a process per core, 1 thread, usable / 4 each',
    ram: 16,
    cores: 4,
    options: { workloadType: 'cpu' },
    expect: { nWorkers: 4, threadsPerWorker: 1, processes: true, perWorkerBytes: 3 * GIB },
  },
  {
    name: '16 GiB laptop, mixed: 2 threads per process',
    ram: 16,
    cores: 4,
    options: { workloadType: 'mixed' },
    expect: { nWorkers: 2, threadsPerWorker: 2, processes: true, perWorkerBytes: 6 * GIB },
  },
  {
    name: 'maxWorkers caps cpu',
    ram: 64,
    cores: 16,
    options: { workloadType: 'cpu', maxWorkers: 3, reserveMemGb: 4 },
    expect: { nWorkers: 3, perWorkerBytes: 20 * GIB },
  },
  {
    name: 'maxWorkers caps mixed',
    ram: 64,
    cores: 16,
    options: { workloadType: 'mixed', maxWorkers: 3, reserveMemGb: 4 },
    expect: { nWorkers: 3, threadsPerWorker: 2 },
  },
  {
    name: 'maxWorkers does not make io multi-process',
    ram: 64,
    cores: 16,
    options: { workloadType: 'io', maxWorkers: 8 },
    expect: { nWorkers: 1, threadsPerWorker: 8, processes: false },
  },
  {
    name: 'threadsPerWorker overrides the workload type\'s choice',
    ram: 64,
    cores: 16,
    options: { workloadType: 'cpu', threadsPerWorker: 2, maxWorkers: 4 },
    expect: { nWorkers: 4, threadsPerWorker: 2 },
  },
  {
    name: '300 GiB Gadi job (PBS_MEM raw bytes, PBS_NCPUS 48) on a bigger node: 48 cpu workers over 250 GiB',
    ram: 384,
    cores: 104,
    env: { PBS_MEM: String(300 * GIB), PBS_NCPUS: '48', PBS_JOBFS: '/jobfs/123.gadi-pbs' },
    options: { workloadType: 'cpu' },
    expect: { totalBytes: 300 * GIB, reserveBytes: 50 * GIB, usableBytes: 250 * GIB, nWorkers: 48, perWorkerBytes: Math.floor((250 * GIB) / 48) },
  },
  {
    name: 'maxMemGb above RAM is bounded by RAM',
    ram: 16,
    cores: 2,
    options: { workloadType: 'cpu', maxMemGb: 64, reserveMemGb: 2 },
    expect: { maxBytes: 16 * GIB, usableBytes: 14 * GIB, nWorkers: 2, perWorkerBytes: 7 * GIB },
  },
]

for (const c of table) {
  test(`sizing: ${c.name}`, (t) => {
    const s = spec(c.options, machine(c.ram, c.cores, c.env))
    t.like(s, c.expect as any)
    t.true(Number.isInteger(s.perWorkerBytes))
    t.true(s.perWorkerBytes * s.nWorkers <= s.usableBytes, 'never over-commits')
  })
}

test('io threads follow dask_setup: min(16, max(4, ceil(cores / 2)))', (t) => {
  const cases: [number, number][] = [[1, 4], [2, 4], [8, 4], [10, 5], [20, 10], [32, 16], [104, 16]]
  for (const [cores, threads] of cases) t.is(decideTopology('io', cores).threadsPerWorker, threads, `${cores} cores`)
  t.is(decideTopology('mixed', 1).nWorkers, 1, 'mixed on one core still starts one worker')
  t.is(decideTopology('cpu', 6, 100).nWorkers, 6, 'cpu never runs more processes than cores')
})

test('fewer workers start when the per-worker share would fall under 1 GiB', (t) => {
  const s = spec({ workloadType: 'cpu', maxMemGb: 3, reserveMemGb: 1 }, machine(16, 8))
  t.is(s.nWorkers, 2)
  t.is(s.perWorkerBytes, GIB)
  t.deepEqual(s.reducedWorkers?.requested, 8)
  t.regex(s.reducedWorkers!.reason, /0\.25 GiB each, under the 1 GiB minimum/)

  const odd = spec({ workloadType: 'mixed', maxMemGb: 3.5, reserveMemGb: 1 }, machine(16, 16))
  t.is(odd.nWorkers, 2, '2.5 GiB fits two 1 GiB workers, not eight')
  t.is(odd.perWorkerBytes, Math.floor(2.5 * GIB / 2))

  const one = spec({ workloadType: 'cpu', maxMemGb: 2.5, reserveMemGb: 1 }, machine(16, 4))
  t.is(one.nWorkers, 1)
  t.is(one.perWorkerBytes, 1.5 * GIB)
})

test('never over-commits and never goes under 1 GiB per worker, over a sweep of machines', (t) => {
  for (const ram of [2, 4.5, 7.3, 16, 31.2, 96]) {
    for (const cores of [1, 2, 3, 8, 48]) {
      for (const workloadType of ['cpu', 'io', 'mixed'] as const) {
        for (const reserveMemGb of [0, 0.5, 1, 3]) {
          const usable = Math.round(ram * GIB) - reserveMemGb * GIB
          if (usable < GIB) {
            t.throws(() => spec({ workloadType, reserveMemGb }, machine(ram, cores)), { instanceOf: InsufficientMemoryError })
            continue
          }
          const s = spec({ workloadType, reserveMemGb }, machine(ram, cores))
          t.true(s.nWorkers >= 1)
          t.true(s.perWorkerBytes >= GIB, `${ram} GiB ${cores} cores ${workloadType}`)
          t.true(s.perWorkerBytes * s.nWorkers <= s.usableBytes)
          t.is(s.usableBytes, usable)
        }
      }
    }
  }
})

test('not even one worker can get 1 GiB: InsufficientMemoryError with suggestions', (t) => {
  const err = t.throws(() => spec({ workloadType: 'cpu', maxMemGb: 1.5, reserveMemGb: 1 }, machine(16, 4)), {
    instanceOf: InsufficientMemoryError,
  }) as InsufficientMemoryError
  t.is(err.code, 'ERR_SPILLWAY_INSUFFICIENT_MEMORY')
  t.regex(err.message, /leaves 0\.50 GiB; a worker needs at least 1\.00 GiB/)
  t.regex(err.message, /lower reserveMemGb to 0\.5 or less/)
  t.regex(err.message, /raise maxMemGb \(now 1\.5\) to at least 2/)
  t.like(err.details, { usableBytes: 0.5 * GIB, requiredBytes: GIB })

  // The default reserve (4 GiB) eats a 4 GiB cap entirely.
  const dflt = t.throws(() => spec({ maxMemGb: 4 }, machine(16, 4))) as Error
  t.regex(dflt.message, /default reserve/)

  const pbs = t.throws(() => spec({ reserveMemGb: 4 }, machine(64, 4, { PBS_MEM: '4gb', PBS_NCPUS: '4' }))) as Error
  t.regex(pbs.message, /from pbs/)
  t.regex(pbs.message, /#PBS -l mem=/)
  const slurm = t.throws(() => spec({ reserveMemGb: 4 }, machine(64, 4, { SLURM_MEM_PER_NODE: '4096', SLURM_CPUS_ON_NODE: '4' }))) as Error
  t.regex(slurm.message, /#SBATCH --mem=/)
})

test('formatSummary prints Python-style booleans like the recipe', (t) => {
  const s = spec({ workloadType: 'io', reserveMemGb: 4 }, machine(16, 4))
  const text = formatSummary(s, { spillDir: '/jobfs/x/spillway-1', spillCompression: 'zstd', commCompression: true })
  t.regex(text, /processes: False/)
  t.regex(text, /Compression: spill=zstd \| comm=True$/)
  t.regex(text, /Memory: total ~16\.0 GiB \| usable ~12\.0 GiB \| per-worker ~12\.0 GiB/)
})
