// No restart loops: `spillway worker` whose workers cannot start (no secret,
// a malformed one) or keep dying stops with one clear message and a
// non-zero exit, having started a bounded number of worker processes.
import test from 'ava'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { schedulerWorkers, setupClient } from 'spillway'
import { alive } from './cluster-helpers'

const BIN = join(__dirname, '..', 'bin', 'spillway.js')
const PRELOAD = join(__dirname, 'fixtures', 'count-workers.cjs')
const fn = (name: string) => ({ module: join(__dirname, 'fixtures', 'tasks', 'hardening.mjs'), name })
const SIZE = ['--nworkers', '1', '--max-mem-gb', '3', '--reserve-mem-gb', '1']
/** Only turns a hang into a failure. */
const HANG_MS = 120_000

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-restart-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** `spillway worker ARGS`, each worker process it forks counted in `count` (and made to crash while `crash` exists). */
function worker(t: { teardown(fn: () => void): void }, args: string[], count: string, crash = join(count + '.crash')) {
  const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${PRELOAD}`, SPILLWAY_TEST_COUNT: count, SPILLWAY_TEST_CRASH: crash }
  const child = spawn(process.execPath, [BIN, 'worker', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  t.teardown(() => void child.kill('SIGKILL'))
  let stderr = ''
  child.stderr!.on('data', (c) => (stderr += c))
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    child.once('exit', (code) => resolve({ code, stderr }))
    setTimeout(() => reject(new Error(`spillway worker still running after ${HANG_MS / 1000} s; stderr:\n${stderr}`)), HANG_MS).unref()
  })
  return { child, exited, stderr: () => stderr }
}

const started = (count: string) => (existsSync(count) ? readFileSync(count, 'utf8').split('\n').filter(Boolean).map(Number) : [])

/** A scheduler file for an address nothing listens on, and its secret file as given. */
function schedulerFileWith(dir: string, secret: string | undefined): string {
  const file = join(dir, 'scheduler.json')
  writeFileSync(file, JSON.stringify({ address: 'tcp://127.0.0.1:9', version: '0.0.0', pid: 1 }), { mode: 0o600 })
  if (secret !== undefined) writeFileSync(`${file}.secret`, secret, { mode: 0o600 })
  return file
}

for (const [what, secret, message] of [
  ['missing', undefined, /cannot read the secret file .*scheduler\.json\.secret/],
  ['malformed', 'not-a-secret\n', /secret file .*scheduler\.json\.secret does not hold 64 hex digits/],
] as const) {
  test(`spillway worker with its scheduler file's secret ${what} exits non-zero at once with one message and starts no worker process`, async (t) => {
    const dir = scratch(t)
    const file = schedulerFileWith(dir, secret)
    const count = join(dir, 'count')
    const w = worker(t, ['--scheduler-file', file, ...SIZE, '--temp-base-dir', dir], count)
    const { code, stderr } = await w.exited
    t.is(code, 1, stderr)
    t.regex(stderr, message)
    t.is(stderr.match(/secret file/g)?.length, 1, `one message, not one per restart:\n${stderr}`)
    t.notRegex(stderr, /\n\s+at /, 'no stack')
    t.deepEqual(started(count), [])
  })
}

test('a worker whose secret goes bad is not restarted: its nanny stops at the first failed start and spillway worker exits non-zero saying why', async (t) => {
  t.timeout(HANG_MS + 60_000)
  const dir = scratch(t)
  const file = join(dir, 'scheduler.json')
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 3, reserveMemGb: 1, dashboard: false, silenceLogs: true, schedulerFile: file, localWorkers: 0 })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const count = join(dir, 'count')
  const w = worker(t, ['--scheduler-file', file, ...SIZE, '--temp-base-dir', dir], count)
  await client.waitForWorkers(1, { timeout: 60_000 })
  const [first] = Object.values(await schedulerWorkers(client))
  writeFileSync(`${file}.secret`, 'garbage\n')
  process.kill(first.pid, 'SIGKILL')
  const { code, stderr } = await w.exited
  t.is(code, 1, stderr)
  t.regex(stderr, /does not hold 64 hex digits/)
  t.regex(stderr, /workers stopped: worker 0 cannot start/)
  t.is(started(count).length, 2, 'the first worker and one try to replace it')
})

test('a worker that keeps dying as it starts is started again ever more slowly, then not at all; spillway worker exits non-zero saying so', async (t) => {
  t.timeout(HANG_MS + 60_000)
  const dir = scratch(t)
  const file = join(dir, 'scheduler.json')
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 3, reserveMemGb: 1, dashboard: false, silenceLogs: true, schedulerFile: file, localWorkers: 0 })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const count = join(dir, 'count')
  writeFileSync(`${count}.crash`, '')
  const w = worker(t, ['--scheduler-file', file, ...SIZE, '--temp-base-dir', dir], count)
  const { code, stderr } = await w.exited
  t.is(code, 1, stderr)
  t.regex(stderr, /worker 0 died 9 times in a row soon after starting \(last: exit code 1\); not starting it again/)
  t.regex(stderr, /starting it again in \d+\.\d s/, 'the waits are logged')
  const pids = started(count)
  t.is(pids.length, 9, 'bounded')
  t.false(pids.some(alive))
})

test('a local worker that keeps dying soon after it starts is given up after a bound; work restricted to its name then fails with ERR_SPILLWAY_NO_WORKER', async (t) => {
  t.timeout(HANG_MS + 60_000)
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false, silenceLogs: true })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const find = async () => Object.values(await schedulerWorkers(client)).find((w) => w.name === 'worker-0')
  const pids = new Set<number>()
  const deadline = Date.now() + HANG_MS
  while (cluster.nannies[0].status !== 'closed') {
    if (Date.now() > deadline) throw new Error(`still restarting after ${pids.size} deaths`)
    const w = await find()
    if (w && !pids.has(w.pid)) {
      pids.add(w.pid)
      process.kill(w.pid, 'SIGKILL')
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  t.is(pids.size, 9, 'restarted 8 times, then given up')
  t.is(await find(), undefined)
  await t.throwsAsync(() => client.submit(fn('pid'), [], { workers: ['worker-0'], pure: false }).result(), { code: 'ERR_SPILLWAY_NO_WORKER' })
  t.is(typeof (await client.submit(fn('pid'), [], { workers: ['worker-1'], pure: false }).result()), 'number', 'the other worker still computes')
})
