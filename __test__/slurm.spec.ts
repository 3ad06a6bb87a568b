// A real SLURM on this machine (scripts/slurm-local.sh, started by .ci/run
// as root): docs/hpc.md's batch script through sbatch, the allocation runner
// under srun, and SlurmCluster submitting sbatch jobs. Without a SLURM the
// tests say so and pass, unless SPILLWAY_REQUIRE_SLURM=1 (as in .ci/run).
import test, { type ExecutionContext } from 'ava'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { random, SlurmCluster } from 'spillway'
import { readDoc } from './docs-helpers'

const ROOT = join(__dirname, '..')

function slurm(t: ExecutionContext): boolean {
  const up = spawnSync('sinfo', ['-h', '-o', '%t'], { encoding: 'utf8' })
  if (up.status === 0 && /idle|mix|alloc/.test(up.stdout)) return true
  if (process.env.SPILLWAY_REQUIRE_SLURM === '1') t.fail(`SLURM is required here but sinfo says: ${up.stderr || up.error?.message || up.stdout}`)
  else t.log('skipped: no SLURM running here (bash scripts/slurm-local.sh start, as root, starts one)')
  return false
}

function scratch(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-slurm-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** docs/hpc.md's SLURM batch script for the allocation runner. */
function readmeBatchScript(): string {
  const readme = readDoc('hpc.md').replace(/^ {2}/gm, '')
  const m = /```sh\n(#!\/bin\/bash\n#SBATCH --nodes=3[\s\S]*?srun node examples\/allocation\.mjs\n)```/.exec(readme)
  if (!m) throw new Error('docs/hpc.md has no SLURM batch script for examples/allocation.mjs')
  return m[1]
}

test('docs/hpc.md’s SLURM batch script runs the allocation runner under sbatch and srun: rank 0 computes on the others’ workers', (t) => {
  t.timeout(5 * 60_000)
  if (!slurm(t)) return t.pass()
  const dir = scratch(t)
  symlinkSync(join(ROOT, 'examples'), join(dir, 'examples'))
  writeFileSync(join(dir, 'job.sh'), readmeBatchScript())
  // One node here: the script's own resources, scaled to this machine on the command line.
  const r = spawnSync('sbatch', ['--wait', '--nodes=1', '--ntasks-per-node=3', '--cpus-per-task=1', '--mem=0', '--chdir', dir, '-o', join(dir, 'out.txt'), join(dir, 'job.sh')], { encoding: 'utf8', timeout: 4 * 60_000 })
  const out = existsSync(join(dir, 'out.txt')) ? readFileSync(join(dir, 'out.txt'), 'utf8') : ''
  t.is(r.status, 0, `${r.stderr}\n${out}`)
  const result = JSON.parse(out.split('\n').filter((l) => l.startsWith('{')).pop()!)
  t.true(Math.abs(result.mean - 0.5) < 1e-3)
  t.is(result.workers, 2, 'ranks 1 and 2 each brought a worker')
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('spillway-scheduler-')), [], 'the scheduler file is gone with the cluster')
})

test('srun -n 3 runs one script on three ranks; the job id keys the scheduler file', (t) => {
  t.timeout(5 * 60_000)
  if (!slurm(t)) return t.pass()
  const dir = scratch(t)
  const script = join(dir, 'ranks.mjs')
  writeFileSync(
    script,
    `import { setupClient } from ${JSON.stringify(join(ROOT, 'dist', 'index.js'))}
const { client, cluster } = await setupClient({ cluster: 'allocation', dashboard: false, silenceLogs: true, maxMemGb: 6, reserveMemGb: 0 })
await client.waitForWorkers(2, { timeout: 120000 })
const file = ${JSON.stringify(dir)} + '/spillway-scheduler-' + process.env.SLURM_JOB_ID + '.json'
const { existsSync } = await import('node:fs')
const ranks = await Promise.all(Array.from({ length: 8 }, (_, i) => client.submit((i) => [i, process.env.SLURM_PROCID], [i], { pure: false }).result()))
console.log(JSON.stringify({ rank: process.env.SLURM_PROCID, file: existsSync(file), ranks: [...new Set(ranks.map((r) => r[1]))].sort() }))
await client.close()
await cluster.close()
`,
  )
  const r = spawnSync('srun', ['-n', '3', '--overcommit', '--chdir', dir, 'node', script], { encoding: 'utf8', timeout: 4 * 60_000 })
  t.is(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!)
  t.is(out.rank, '0', 'only rank 0 gets past setupClient')
  t.true(out.file)
  t.deepEqual(out.ranks, ['1', '2'], 'the tasks ran on the workers of ranks 1 and 2')
})

test('SlurmCluster submits real sbatch jobs whose workers join; close cancels them', async (t) => {
  t.timeout(5 * 60_000)
  if (!slurm(t)) return t.pass()
  const dir = scratch(t)
  const cluster = new SlurmCluster({ cores: 1, memory: '2GB', walltime: '00:10:00', logDirectory: dir, tempBaseDir: dir })
  t.teardown(() => cluster.close())
  await cluster.scale(2)
  const ids = [...cluster.jobs.keys()]
  t.is(ids.length, 2)
  const client = await cluster.getClient()
  await client.waitForWorkers(2, { timeout: 180_000 })
  t.deepEqual([...client.scheduler.workers.values()].map((w) => w.jobId).sort(), [...ids].sort())
  const x = await client.persist(random.random([4000, 4000], { chunks: [1000, 1000], seed: 9 }))
  await x.wait()
  t.true(Math.abs((await client.compute(x.mean())) - 0.5) < 0.01)
  await client.close()
  await cluster.close()
  // scancel'd (or ended with their workers): none of ours is left in the queue.
  for (let i = 0; i < 50; i++) {
    if (execFileSync('squeue', ['-h', '-j', ids.join(','), '-o', '%i'], { encoding: 'utf8' }).trim() === '') break
    await new Promise((r) => setTimeout(r, 200))
  }
  t.is(execFileSync('squeue', ['-h', '-j', ids.join(','), '-o', '%i'], { encoding: 'utf8' }).trim(), '')
})
