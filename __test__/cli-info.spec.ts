import test from 'ava'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { GIB } from 'spillway'
import { scratch } from './helpers'

const BIN = join(__dirname, '..', 'bin', 'spillway.js')

/** The environment of a shell with no batch system, plus `extra`. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!/^(PBS_|SLURM_|TMPDIR$|NCPUS$)/.test(k)) env[k] = v
  return { ...env, ...extra }
}

function spillway(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as any).code === 'number' ? (err as any).code : -1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

const PRESSURE = ['--max-mem-gb', '3', '--reserve-mem-gb', '1', '--max-workers', '2', '--workload-type', 'cpu']

test('spillway info prints the system memory analysis, the limits and the planned sizing', async (t) => {
  const { code, stdout, stderr } = await spillway(['info'], cleanEnv())
  t.is(code, 0, stderr)
  for (const heading of ['SYSTEM MEMORY ANALYSIS', 'Physical Memory:', 'Swap Memory:', 'CPU Information:', 'HPC ENVIRONMENT VARIABLES:', 'LIMITS ON THIS PROCESS:', 'PLANNED SIZING (default configuration)']) {
    t.true(stdout.includes(heading), heading)
  }
  t.regex(stdout, /Total: \d+\.\d\d GiB/)
  t.regex(stdout, /Used: \d+\.\d\d GiB \(\d+\.\d%\)/)
  t.regex(stdout, /Physical cores: \d+\n\s+Logical cores: \d+/)
  t.regex(stdout, /No HPC environment variables detected \(running locally\)/)
  t.regex(stdout, /Usable memory: .* \(from (system|cgroup)\)/)
  t.regex(stdout, /Spill base: .* \(from os\)/)
  t.false(stdout.includes('PLANNED SIZING (--'), 'no second plan without options')
})

test('spillway info inside a PBS job lists its variables and plans spill under $PBS_JOBFS', async (t) => {
  const jobfs = scratch(t)
  const env = cleanEnv({ PBS_JOBFS: jobfs, PBS_MEM: String(300 * GIB), PBS_NCPUS: '48', PBS_JOBID: '123.gadi-pbs' })
  const { code, stdout, stderr } = await spillway(['info', ...PRESSURE], env)
  t.is(code, 0, stderr)
  t.true(stdout.includes(`PBS_JOBFS: ${jobfs} (Fast local storage directory)`))
  t.true(stdout.includes(`PBS_MEM: ${300 * GIB}`))
  t.true(stdout.includes('PBS_NCPUS: 48'))
  t.regex(stdout, /PBS: {4}memory 300\.00 GiB \| cpus 48/)
  t.true(stdout.includes(`Spill base: ${jobfs} (from PBS_JOBFS)`))
  t.true(stdout.includes(`temp/spill dir: ${join(jobfs, 'spillway-XXXXXX')}`))
  t.true(stdout.includes('PLANNED SIZING (--max-mem-gb 3 --reserve-mem-gb 1 --max-workers 2 --workload-type cpu)'))
  t.true(stdout.includes('[spillway] Configuration summary'))
  t.true(stdout.includes('Compression: spill=auto | comm=False'))
})

test('spillway info --json with the recipe\'s pressure options gives 1 GiB per worker', async (t) => {
  const jobfs = scratch(t)
  const env = cleanEnv({ PBS_JOBFS: jobfs, PBS_MEM: String(300 * GIB), PBS_NCPUS: '48', SLURM_JOB_ID: '9' })
  const { code, stdout, stderr } = await spillway(['info', '--json', ...PRESSURE], env)
  t.is(code, 0, stderr)
  const report = JSON.parse(stdout)
  const r = report.resources
  t.is(r.limits.pbsMemoryBytes, 300 * GIB)
  t.is(r.limits.pbsCpus, 48)
  t.deepEqual(r.hpcVars, { PBS_JOBFS: jobfs, PBS_MEM: String(300 * GIB), PBS_NCPUS: '48', SLURM_JOB_ID: '9' })
  t.true(r.memoryBytes <= 300 * GIB)
  t.like(report.requested.options, { maxMemGb: 3, reserveMemGb: 1, maxWorkers: 2, workloadType: 'cpu' })
  t.like(report.requested.spill, { base: jobfs, baseSource: 'PBS_JOBFS' })
  t.is(report.default.options.workloadType, 'io')
  const s = report.requested.memorySpec
  if (r.memoryBytes >= 3 * GIB && r.cores >= 2) {
    t.like(s, { nWorkers: 2, threadsPerWorker: 1, processes: true, perWorkerBytes: 2 ** 30, usableBytes: 2 * GIB })
    t.regex(report.requested.summary, /Workers: 2 \| threads\/worker: 1 \| processes: True/)
  } else {
    t.log(`this machine has ${r.memoryBytes} bytes / ${r.cores} cores: checking only the never-over-commit rule`)
    if (s) t.true(s.perWorkerBytes * s.nWorkers <= s.usableBytes)
  }
})

test('a SLURM allocation bounds memory and cores; fewer workers are planned', async (t) => {
  const env = cleanEnv({ SLURM_CPUS_ON_NODE: '1', SLURM_MEM_PER_NODE: '2048' })
  const { code, stdout, stderr } = await spillway(['info', '--json', ...PRESSURE], env)
  t.is(code, 0, stderr)
  const report = JSON.parse(stdout)
  t.like(report.resources.limits, { slurmCpus: 1, slurmMemoryBytes: 2 * GIB })
  t.is(report.resources.cores, 1)
  t.is(report.resources.source.cores, 'slurm')
  if (report.resources.source.memory === 'slurm') {
    // min(3 GiB cap, 2 GiB allocation) − 1 GiB reserve = 1 GiB: one cpu worker (one core).
    t.like(report.requested.memorySpec, { nWorkers: 1, perWorkerBytes: GIB, maxBytes: 2 * GIB })
    // The default reserve (4 GiB) does not fit a 2 GiB allocation: the default plan explains why.
    t.is(report.default.error.code, 'ERR_SPILLWAY_INSUFFICIENT_MEMORY')
    t.regex(report.default.error.message, /#SBATCH --mem=/)
  }
  const text = await spillway(['info'], env)
  t.is(text.code, 0)
  t.true(text.stdout.includes('SLURM_MEM_PER_NODE: 2048 (Memory per node (SLURM))'))
})

test('unknown flags, bad values and malformed batch variables exit 2 naming the culprit', async (t) => {
  const typo = await spillway(['info', '--max-mem-gib', '3'], cleanEnv())
  t.is(typo.code, 2)
  t.regex(typo.stderr, /unknown flag --max-mem-gib; did you mean --max-mem-gb\?/)
  const nan = await spillway(['info', '--max-mem-gb', 'three'], cleanEnv())
  t.is(nan.code, 2)
  t.regex(nan.stderr, /--max-mem-gb expects a number, got "three"/)
  const bad = await spillway(['info', '--workload-type', 'gpu', '--memory-target', '0.95', '--spill-compression', 'brotli'], cleanEnv())
  t.is(bad.code, 2)
  t.regex(bad.stderr, /3 problems/)
  for (const field of ['workloadType', 'memorySpill', 'spillCompression']) t.true(bad.stderr.includes(field), field)
  const tmp = await spillway(['info', '--temp-base-dir', '/definitely/not/here'], cleanEnv())
  t.is(tmp.code, 2)
  t.regex(tmp.stderr, /tempBaseDir.*does not exist/)
  const pbs = await spillway(['info'], cleanEnv({ PBS_MEM: 'lots' }))
  t.is(pbs.code, 2)
  t.regex(pbs.stderr, /PBS_MEM: got "lots"/)
})

test('--help lists the commands; an unknown command exits 2', async (t) => {
  const help = await spillway(['--help'], cleanEnv())
  t.is(help.code, 0)
  t.regex(help.stdout, /Commands:\n\s+info\s+/)
  const infoHelp = await spillway(['info', '--help'], cleanEnv())
  t.is(infoHelp.code, 0)
  t.regex(infoHelp.stdout, /--max-mem-gb <number>/)
  const none = await spillway([], cleanEnv())
  t.is(none.code, 2)
  const unknown = await spillway(['infoo'], cleanEnv())
  t.is(unknown.code, 2)
  t.regex(unknown.stderr, /unknown command "infoo"; did you mean info\?/)
})

test('--profile and --config files are honoured by info', async (t) => {
  const dir = scratch(t)
  const file = join(dir, 'site.yaml')
  require('node:fs').writeFileSync(file, 'profile: conservative\nmax_mem_gb: 8\n')
  const { code, stdout, stderr } = await spillway(['info', '--json', '--config', file, '--reserve-mem-gb', '2'], cleanEnv())
  t.is(code, 0, stderr)
  const report = JSON.parse(stdout)
  t.like(report.requested.options, { workloadType: 'cpu', memoryTarget: 0.6, maxMemGb: 8, reserveMemGb: 2 })
  const prof = await spillway(['info', '--json', '--profile', 'development'], cleanEnv())
  t.like(JSON.parse(prof.stdout).requested.options, { workloadType: 'mixed', maxWorkers: 2, reserveMemGb: 8 })
})
