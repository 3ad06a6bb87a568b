import test from 'ava'
import { join } from 'node:path'
import {
  batchLimits,
  ConfigError,
  detectResources,
  GIB,
  parseBatchCpus,
  parseBatchMemory,
  readCgroupLimits,
  resolveResources,
  type SystemSnapshot,
} from 'spillway'

const MIB = 2 ** 20
const FIXTURES = join(__dirname, 'fixtures', 'cgroup')

function system(ramGib: number, cores: number): SystemSnapshot {
  const total = ramGib * GIB
  return {
    totalMemoryBytes: total,
    availableMemoryBytes: total * 0.9,
    usedMemoryBytes: total * 0.1,
    freeMemoryBytes: total * 0.8,
    swapTotalBytes: 2 * GIB,
    swapUsedBytes: 0,
    swapFreeBytes: 2 * GIB,
    physicalCores: cores / 2,
    logicalCores: cores,
  }
}

const memoryCases: [string, string, number][] = [
  // Gadi writes raw bytes; other PBS sites MiB; suffixes are binary as PBS defines them.
  ['PBS_MEM', '322122547200', 300 * GIB],
  ['PBS_MEM', '1000000000', 1_000_000_000],
  ['PBS_MEM', '16384', 16 * GIB],
  ['PBS_VMEM', '999999999', 999_999_999 * MIB],
  ['PBS_MEM', '190gb', 190 * GIB],
  ['PBS_MEM', '190GB', 190 * GIB],
  ['PBS_MEM', '4000mb', 4000 * MIB],
  ['PBS_MEM', '512kb', 512 * 1024],
  ['PBS_MEM', '2tb', 2 * 1024 * GIB],
  ['PBS_MEM', '1048576b', MIB],
  ['PBS_MEM', '1.5gb', 1.5 * GIB],
  ['PBS_MEM', ' 8gb ', 8 * GIB],
  // SLURM: MB by default, K/M/G/T suffixes.
  ['SLURM_MEM_PER_NODE', '4000', 4000 * MIB],
  ['SLURM_MEM_PER_NODE', '322122547200', 322122547200 * MIB],
  ['SLURM_MEM_PER_NODE', '4000M', 4000 * MIB],
  ['SLURM_MEM_PER_NODE', '16G', 16 * GIB],
  ['SLURM_MEM_PER_NODE', '1T', 1024 * GIB],
  ['SLURM_MEM_PER_CPU', '524288K', 512 * MIB],
]

for (const [name, value, bytes] of memoryCases) {
  test(`parseBatchMemory ${name}=${JSON.stringify(value)}`, (t) => {
    t.is(parseBatchMemory(name, value), bytes)
  })
}

test('a malformed memory or CPU variable is a ConfigError naming the variable and value', (t) => {
  for (const [name, value] of [
    ['PBS_MEM', 'lots'],
    ['PBS_MEM', '-5gb'],
    ['PBS_MEM', '12 parsecs'],
    ['PBS_VMEM', '1e9'],
    ['SLURM_MEM_PER_NODE', '16Q'],
    ['SLURM_MEM_PER_CPU', '4,000'],
  ]) {
    const err = t.throws(() => parseBatchMemory(name, value), { instanceOf: ConfigError }) as ConfigError
    t.deepEqual(err.problems.map((p) => [p.field, p.value]), [[name, value]])
    t.regex(err.message, new RegExp(name))
  }
  for (const value of ['abc', '0', '-2', '4(x2)', '2.5']) {
    t.throws(() => parseBatchCpus('PBS_NCPUS', value), { instanceOf: ConfigError, message: /PBS_NCPUS.*positive integer/ })
  }
  t.is(parseBatchCpus('SLURM_CPUS_ON_NODE', ' 48 '), 48)
})

test('batchLimits reads PBS and SLURM, and reports every malformed variable at once', (t) => {
  t.deepEqual(batchLimits({}), {})
  t.deepEqual(batchLimits({ PBS_MEM: '190gb', PBS_VMEM: '200gb', PBS_NCPUS: '48' }), { pbsMemoryBytes: 190 * GIB, pbsCpus: 48 })
  t.deepEqual(batchLimits({ PBS_VMEM: '8gb' }), { pbsMemoryBytes: 8 * GIB })
  t.deepEqual(batchLimits({ NCPUS: '12' }), {}, 'a bare NCPUS outside a PBS job is not trusted')
  t.deepEqual(batchLimits({ NCPUS: '12', PBS_JOBID: '1.pbs' }), { pbsCpus: 12 })
  t.deepEqual(batchLimits({ SLURM_CPUS_ON_NODE: '8', SLURM_MEM_PER_NODE: '16G' }), { slurmCpus: 8, slurmMemoryBytes: 16 * GIB })
  t.deepEqual(batchLimits({ SLURM_CPUS_ON_NODE: '8', SLURM_MEM_PER_CPU: '2000' }), { slurmCpus: 8, slurmMemoryBytes: 8 * 2000 * MIB })
  t.deepEqual(batchLimits({ SLURM_MEM_PER_CPU: '2G' }, 3), { slurmMemoryBytes: 6 * GIB }, 'per-CPU × the usable cores without SLURM_CPUS_ON_NODE')
  t.deepEqual(batchLimits({ SLURM_CPUS_ON_NODE: '4', SLURM_MEM_PER_NODE: '0' }), { slurmCpus: 4 }, '--mem=0 is the whole node')
  const err = t.throws(() => batchLimits({ PBS_MEM: 'big', PBS_NCPUS: 'many', SLURM_MEM_PER_NODE: '1X' }), { instanceOf: ConfigError }) as ConfigError
  t.deepEqual(err.problems.map((p) => p.field).sort(), ['PBS_MEM', 'PBS_NCPUS', 'SLURM_MEM_PER_NODE'])
})

test('resolveResources: the smallest bound wins and says where it came from', (t) => {
  const laptop = resolveResources(system(16, 8), {}, {})
  t.like(laptop, { memoryBytes: 16 * GIB, cores: 8, source: { memory: 'system', cores: 'system' }, limits: {}, hpcVars: {} })
  t.like(laptop, { totalMemoryBytes: 16 * GIB, swapTotalBytes: 2 * GIB, physicalCores: 4, logicalCores: 8 })

  const gadiEnv = { PBS_MEM: String(300 * GIB), PBS_VMEM: String(300 * GIB), PBS_NCPUS: '48', PBS_JOBFS: '/jobfs/1.gadi', TMPDIR: '/jobfs/1.gadi' }
  const gadi = resolveResources(system(384, 104), {}, gadiEnv)
  t.like(gadi, { memoryBytes: 300 * GIB, cores: 48, source: { memory: 'pbs', cores: 'pbs' }, limits: { pbsMemoryBytes: 300 * GIB, pbsCpus: 48 } })
  t.deepEqual(gadi.hpcVars, gadiEnv)

  const tie = resolveResources(system(384, 104), { memoryBytes: 300 * GIB, cpus: 48 }, gadiEnv)
  t.like(tie.source, { memory: 'pbs', cores: 'pbs' }, 'a PBS cgroup equal to PBS_MEM is reported as PBS')

  const container = resolveResources(system(64, 16), { memoryBytes: 6 * GIB, cpus: 2.5 }, { SLURM_CPUS_ON_NODE: '8', SLURM_MEM_PER_NODE: '32G' })
  t.like(container, { memoryBytes: 6 * GIB, cores: 2, source: { memory: 'cgroup', cores: 'cgroup' } })
  t.like(container.limits, { cgroupMemoryBytes: 6 * GIB, cgroupCpus: 2.5, slurmMemoryBytes: 32 * GIB, slurmCpus: 8 })

  const slurm = resolveResources(system(64, 16), {}, { SLURM_CPUS_ON_NODE: '4', SLURM_MEM_PER_CPU: '4000M', SLURM_JOB_ID: '77' })
  t.like(slurm, { memoryBytes: 16000 * MIB, cores: 4, source: { memory: 'slurm', cores: 'slurm' } })
  t.deepEqual(slurm.hpcVars, { SLURM_CPUS_ON_NODE: '4', SLURM_MEM_PER_CPU: '4000M', SLURM_JOB_ID: '77' })

  const tiny = resolveResources(system(64, 16), { cpus: 0.5 }, {})
  t.is(tiny.cores, 1, 'half a CPU of quota still runs one worker')

  t.throws(() => resolveResources(system(16, 4), {}, { PBS_MEM: '??' }), { instanceOf: ConfigError, message: /PBS_MEM/ })
})

test('cgroup v2: memory.max and cpu.max, the tightest level of the path up to the root', async (t) => {
  const dir = join(FIXTURES, 'v2')
  t.deepEqual(await readCgroupLimits({ cgroupRoot: join(dir, 'root'), procCgroupFile: join(dir, 'proc-self-cgroup') }), {
    memoryBytes: 8 * GIB,
    cpus: 1.5,
  })
})

test('cgroup v1: memory.limit_in_bytes and cfs quota/period under co-mounted cpu,cpuacct', async (t) => {
  const dir = join(FIXTURES, 'v1')
  t.deepEqual(await readCgroupLimits({ cgroupRoot: join(dir, 'root'), procCgroupFile: join(dir, 'proc-self-cgroup') }), {
    memoryBytes: 4 * GIB,
    cpus: 4,
  })
})

test('cgroup namespace: a path that is not under the mount means the mount root is our cgroup', async (t) => {
  const dir = join(FIXTURES, 'v2-namespaced')
  t.deepEqual(await readCgroupLimits({ cgroupRoot: join(dir, 'root'), procCgroupFile: join(dir, 'proc-self-cgroup') }), {
    memoryBytes: 2 * GIB,
    cpus: 2,
  })
})

test('cgroup without limits (v1 "unlimited", missing files) adds no bound', async (t) => {
  const dir = join(FIXTURES, 'v1-unlimited')
  t.deepEqual(await readCgroupLimits({ cgroupRoot: join(dir, 'root'), procCgroupFile: join(dir, 'proc-self-cgroup') }), {})
  t.deepEqual(await readCgroupLimits({ cgroupRoot: join(dir, 'root'), procCgroupFile: join(dir, 'missing') }), {})
})

test('detectResources on this machine, alone and bounded by a PBS job and a cgroup fixture', async (t) => {
  const here = await detectResources({ env: {} })
  t.true(here.totalMemoryBytes > 0)
  t.true(here.memoryBytes > 0 && here.memoryBytes <= here.totalMemoryBytes)
  t.true(here.cores >= 1 && here.cores <= here.logicalCores)
  t.true(here.availableMemoryBytes <= here.totalMemoryBytes)
  t.is(here.usedMemoryBytes, here.totalMemoryBytes - here.availableMemoryBytes)
  t.deepEqual(here.hpcVars, {})

  const job = await detectResources({ env: { PBS_MEM: '1gb', PBS_NCPUS: '1', PBS_JOBFS: '/jobfs' } })
  t.like(job, { memoryBytes: GIB, cores: 1, source: { memory: 'pbs', cores: 'pbs' } })
  t.is(job.hpcVars.PBS_JOBFS, '/jobfs')

  const dir = join(FIXTURES, 'v2-namespaced')
  const boxed = await detectResources({ env: {}, cgroupRoot: join(dir, 'root'), procCgroupFile: join(dir, 'proc-self-cgroup') })
  if (here.totalMemoryBytes > 2 * GIB) t.like(boxed, { memoryBytes: 2 * GIB, source: { memory: 'cgroup' } })
  t.true(boxed.cores <= 2)
  t.deepEqual(Object.keys(boxed).sort(), [
    'availableMemoryBytes',
    'cores',
    'freeMemoryBytes',
    'hpcVars',
    'limits',
    'logicalCores',
    'memoryBytes',
    'physicalCores',
    'source',
    'swapFreeBytes',
    'swapTotalBytes',
    'swapUsedBytes',
    'totalMemoryBytes',
    'usedMemoryBytes',
  ])
})
