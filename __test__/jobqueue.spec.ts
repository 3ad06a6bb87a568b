// Job-queue clusters: scripts against golden files (docs/hpc.md shows the
// same ones), and the whole life of a cluster through stand-in sbatch /
// scancel / qsub / qdel that run each job script as a batch system would.
import test from 'ava'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PbsCluster, random, SlurmCluster } from 'spillway'
import { readDoc } from './docs-helpers'

const GOLDEN = join(__dirname, 'golden')
// docs/hpc.md shows the scripts inside a list item, indented by two spaces.
const HPC_DOC = readDoc('hpc.md').replace(/^ {2}/gm, '')
const UPDATE = process.env.SPILLWAY_UPDATE_GOLDEN === '1'
const COMMON = { logDirectory: '/scratch/ab12/me/logs', schedulerFile: '/scratch/ab12/me/logs/scheduler.json', command: ['node', '/opt/spillway/bin/spillway.js'], jobScriptPrologue: ['module load nodejs/20'] }

function golden(t: any, name: string, actual: string) {
  const file = join(GOLDEN, name)
  if (UPDATE) return writeFileSync(file, actual)
  t.is(actual, readFileSync(file, 'utf8'), name)
  t.true(HPC_DOC.includes(actual.trim()), `docs/hpc.md shows ${name} as the test checks it`)
}

test('job scripts: SLURM, PBS in Gadi’s form (-P, jobfs, storage, no select) and PBS Pro’s select form, against golden files', (t) => {
  golden(t, 'slurm.sh', new SlurmCluster({ ...COMMON, cores: 8, memory: '32 GiB', processes: 2, walltime: '02:00:00', queue: 'work', account: 'ab12', jobExtraDirectives: ['--qos=normal'] }).jobScript())
  golden(t, 'pbs-gadi.sh', new PbsCluster({ ...COMMON, cores: 48, memory: '190 GiB', walltime: '02:00:00', queue: 'normal', project: 'ab12', jobfs: '200 GiB', storage: 'gdata/ab12+scratch/ab12', jobExtraDirectives: ['-l wd'] }).jobScript())
  const select = new PbsCluster({ ...COMMON, cores: 4, memory: '16 GiB', select: true, account: 'proj1', jobDirectivesSkip: ['-e '], interface: 'ib0', tempBaseDir: '/local/$USER' }).jobScript()
  t.regex(select, /^#PBS -l select=1:ncpus=4:mem=16GB$/m)
  t.regex(select, /^#PBS -A proj1$/m)
  t.notRegex(select, /^#PBS -e /m, 'skipped')
  t.notRegex(select, /ncpus=4$/m)
  t.regex(select, /--interface ib0 --temp-base-dir '\/local\/\$USER'$/m)
})

test('job-queue options: every bad one named, with what is allowed (and a guess for a misspelt name)', (t) => {
  const e = t.throws(() => new PbsCluster({ cores: 0, memory: 'lots', walltime: '1:xx', projet: 'ab12', storage: 'a b', select: 'yes' } as any))!
  t.is((e as any).code, 'ERR_SPILLWAY_INVALID_CONFIG')
  for (const s of ['cores', 'memory', 'walltime', 'projet', 'did you mean project?', 'storage', 'select']) t.true(e.message.includes(s), `${s} in ${e.message}`)
  t.throws(() => new SlurmCluster({ cores: 1, memory: '1 GiB', account: 'a;rm -rf' }), { message: /account/ })
  t.throws(() => new SlurmCluster({ cores: 1, memory: '1 GiB', jobName: 'x y' }), { message: /jobName/ })
})

function standIns(t: any): string {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-batch-'))
  for (const [name, src] of [['sbatch', 'submit.sh'], ['qsub', 'submit.sh'], ['scancel', 'cancel.sh'], ['qdel', 'cancel.sh']]) copyFileSync(join(__dirname, 'fixtures', 'batch', src), join(dir, name))
  for (const n of ['sbatch', 'qsub', 'scancel', 'qdel']) require('node:fs').chmodSync(join(dir, n), 0o755)
  const path = process.env.PATH
  process.env.PATH = `${dir}:${path}`
  t.teardown(() => {
    process.env.PATH = path
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

const calls = (dir: string) => (existsSync(join(dir, 'calls.log')) ? readFileSync(join(dir, 'calls.log'), 'utf8').trim().split('\n') : [])

async function until(what: string, fn: () => boolean, ms = 60_000) {
  const end = Date.now() + ms
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

for (const [Flavour, submit, cancel, idPattern] of [
  [SlurmCluster, 'sbatch --parsable', 'scancel', /^\d+$/],
  [PbsCluster, 'qsub', 'qdel', /^\d+\.pbs-test$/],
] as const) {
  test(`${Flavour.name}: scale submits jobs whose workers join; work runs on them; scale down cancels one; close cancels the rest and removes the scheduler file`, async (t) => {
    t.timeout(3 * 60_000)
    const bin = standIns(t)
    const logs = mkdtempSync(join(tmpdir(), 'spillway-jobs-'))
    t.teardown(() => rmSync(logs, { recursive: true, force: true }))
    mkdirSync(join(logs, 'spill'))
    const cluster = new (Flavour as any)({ cores: 1, memory: '2 GiB', walltime: '00:30:00', logDirectory: logs, tempBaseDir: join(logs, 'spill') })
    t.teardown(() => cluster.close())
    await cluster.scale(2)
    t.deepEqual(calls(bin).map((c: string) => c.replace(/ \S+\.sh$/, '')), [submit, submit])
    const client = await cluster.getClient()
    await client.waitForWorkers(2, { timeout: 90_000 })
    const ids = [...cluster.jobs.keys()]
    t.true(ids.every((id: string) => idPattern.test(id)), ids.join())
    await until('the jobs to be seen running', () => [...cluster.jobs.values()].every((j: any) => j.startedAt))
    t.deepEqual([...client.scheduler.workers.values()].map((w) => w.jobId).sort(), [...ids].sort())
    const x = await client.persist(random.random([4000, 4000], { chunks: [1000, 1000], seed: 3 }))
    await x.wait()
    t.true(Math.abs((await client.compute(x.mean())) - 0.5) < 0.01)
    t.is(await client.submit((a: number) => a * 3, [client.submit((a: number) => a + 1, [13])]).result(), 42)

    await cluster.scale(1)
    t.is(calls(bin).filter((c: string) => c.startsWith(cancel)).length, 1)
    await until('the cancelled job’s worker to leave', () => client.scheduler.workers.size === 1)
    t.true(Math.abs((await client.compute(x.mean())) - 0.5) < 0.01, 'its chunks are made again')
    const file = cluster.schedulerFile
    t.true(existsSync(file))
    await client.close()
    await cluster.close()
    t.false(existsSync(file))
    const left = cluster.jobs.size
    t.is(left, 0)
    t.is(calls(bin).filter((c: string) => c.startsWith(cancel)).length, 2)
  })
}

test('adapt: jobs follow the work between minimum and maximum, counting jobs still queued', async (t) => {
  t.timeout(3 * 60_000)
  const bin = standIns(t)
  const logs = mkdtempSync(join(tmpdir(), 'spillway-jobs-'))
  t.teardown(() => rmSync(logs, { recursive: true, force: true }))
  const cluster = new SlurmCluster({ cores: 1, memory: '2 GiB', logDirectory: logs, tempBaseDir: logs })
  t.teardown(() => cluster.close())
  await cluster.adapt({ minimum: 1, maximum: 2, interval: 200, waitCount: 2 })
  await until('the minimum', () => cluster.jobs.size === 1)
  const client = await cluster.getClient()
  await client.waitForWorkers(1, { timeout: 90_000 })
  // Work for more than one worker: a second job, and no more than the maximum.
  const slow = client.map((ms: number) => new Promise((r) => setTimeout(() => r(ms), ms)), Array.from({ length: 40 }, (_, i) => 200 + i), { pure: false })
  await until('a second job', () => cluster.jobs.size === 2)
  await client.gather(slow)
  t.is(calls(bin).filter((c) => c.startsWith('sbatch')).length, 2, 'never past the maximum, nor again for a job still starting')
  // Idle again: back to the minimum after waitCount checks.
  await until('the scale-down', () => calls(bin).some((c) => c.startsWith('scancel')), 30_000)
  t.is(cluster.jobs.size, 1)
  t.is(calls(bin).filter((c) => c.startsWith('scancel')).length, 1)
  await client.close()
})
