// Nothing waits for ever: each of these paths used to hang and now settles,
// with a value or a coded error. Limits below only turn a hang into a failure.
import test from 'ava'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { schedulerWorkers, type Client, type SpillwayError } from 'spillway'
import { alive, cluster, sharedCluster, until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks', 'hardening.mjs')
const fn = (name: string) => ({ module: FIX, name })
const HANG_MS = 60_000

// One cluster for the tests that leave its workers as they found them (the
// same workers as cluster()'s); the tests run one at a time.
let client!: Client
sharedCluster(test, (c) => (client = c), { reserveMemGb: 1 })

function bounded<T>(p: Promise<T>, what: string, ms = HANG_MS): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not settle in ${ms / 1000} s`)), ms)))]).finally(() => clearTimeout(timer))
}

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-settle-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const byName = async (client: Parameters<typeof schedulerWorkers>[0]) => Object.values(await schedulerWorkers(client)).sort((a, b) => a.name.localeCompare(b.name))

test.serial('an argument that cannot be sent fails at submit, naming its path; the cluster goes on', async (t) => {
  for (const [args, path] of [
    [[() => 1], 'args[0]'],
    [[1, { a: [2, function f() {}] }], 'args[1].a[1]'],
    [[{ 'odd key': Symbol('s') }], 'args[0]["odd key"]'],
  ] as const) {
    for (const pure of [false, true]) {
      const e = t.throws(() => client.submit(fn('echo'), args as unknown[], { pure })) as SpillwayError
      t.is(e.code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
      t.is((e.details.problems as any[])[0].field, path, e.message)
    }
  }
  const e = t.throws(() => client.map(fn('echo'), [1, () => 2], { pure: false })) as SpillwayError
  t.is((e.details.problems as any[])[0].field, 'items[1]')
  t.deepEqual(await bounded(client.submit(fn('echo'), [{ a: [1, 2] }], { pure: false }).result(), 'a task after the refused ones'), { a: [1, 2] })
})

test.serial('result() of a running task rejects with ERR_SPILLWAY_CLOSED once the client closes, asked before or after', async (t) => {
  // Its own cluster: it closes its client.
  const { client } = await cluster(t)
  const f = client.submit(fn('sleep'), [60_000, 1], { pure: false })
  await until(() => client.scheduler.tasks.get(f.key)?.state === 'processing', 20_000, 'the task to run')
  const before = f.result()
  await client.close()
  const after = f.result()
  for (const p of [before, after]) t.is(((await bounded(p.then(() => undefined, (e) => e), 'result()')) as SpillwayError)?.code, 'ERR_SPILLWAY_CLOSED')
  t.is(((await bounded(f.exception(), 'exception()')) as SpillwayError)?.code, 'ERR_SPILLWAY_CLOSED')
})

test.serial('a restriction by name follows its worker across a restart: gather of a scattered value and a new submit resolve', async (t) => {
  // Its own cluster: it SIGKILLs a worker.
  const { client } = await cluster(t)
  const [a] = await byName(client)
  const scattered = await client.scatter({ v: 41 }, { workers: [a.name] })
  process.kill(a.pid, 'SIGKILL')
  t.deepEqual(await bounded(client.gather(scattered), 'gather after the holder died'), { v: 41 })
  const pid = await bounded(client.submit(fn('pid'), [], { workers: [a.name], pure: false }).result(), 'submit restricted to a restarted worker') as number
  t.not(pid, a.pid)
  const again = (await byName(client)).find((w) => w.name === a.name)!
  t.is(again.pid, pid, 'the same name, a new process')
  t.not(again.address, a.address, 'a new address')
})

test.serial('a restriction no live or restarting worker can meet fails with ERR_SPILLWAY_NO_WORKER naming it: a dead address, an unknown name', async (t) => {
  // Its own cluster: it SIGKILLs a worker.
  const { client } = await cluster(t)
  const [a, b] = await byName(client)
  const scattered = await client.scatter({ v: 7 }, { workers: [a.address] })
  const queued = client.submit(fn('sleep'), [100, 'x'], { workers: [a.address], pure: false })
  await bounded(queued.result(), 'the first run')
  process.kill(a.pid, 'SIGKILL')
  const gatherErr = (await bounded(client.gather(scattered).then(() => undefined, (e) => e), 'gather of a value restricted to a dead address')) as SpillwayError
  t.is(gatherErr?.code, 'ERR_SPILLWAY_NO_WORKER')
  t.deepEqual(gatherErr.details.workers, [a.address])
  t.regex(gatherErr.message, /restrict by name/)
  const submitErr = (await bounded(client.submit(fn('pid'), [], { workers: [a.address], pure: false }).result().then(() => undefined, (e) => e), 'submit restricted to a dead address')) as SpillwayError
  t.is(submitErr?.code, 'ERR_SPILLWAY_NO_WORKER')
  t.true((submitErr.details.live as string[]).includes(b.name))
  const unknown = (await bounded(client.submit(fn('pid'), [], { workers: ['no-such-worker'], pure: false }).result().then(() => undefined, (e) => e), 'unknown name')) as SpillwayError
  t.is(unknown?.code, 'ERR_SPILLWAY_NO_WORKER')
  await t.throwsAsync(() => client.scatter(1, { workers: ['no-such-worker'] }), { code: 'ERR_SPILLWAY_NO_WORKER' })
  t.is(await bounded(client.submit(fn('pid'), [], { workers: [a.address, b.name], pure: false }).result(), 'a restriction one live worker meets'), b.pid)
})

test.serial('a cancelled task that never returns has its worker restarted after a grace period; what it held is recomputed and work runs there again', async (t) => {
  // Its own cluster: its worker is restarted.
  const { client } = await cluster(t)
  const dir = scratch(t)
  const [a] = await byName(client)
  const marker = join(dir, 'started')
  const held = client.submit(fn('pid'), [], { workers: [a.name], pure: false })
  const heldBy = await bounded(held.result(), 'a value held there')
  const stubborn = client.submit(fn('ignoreCancel'), [marker], { workers: [a.name], pure: false })
  await until(() => existsSync(marker), 20_000, 'the task to start')
  const pid = Number(readFileSync(marker, 'utf8'))
  stubborn.cancel()
  t.is(((await bounded(stubborn.exception(), 'the cancelled Future')) as SpillwayError)?.code, 'ERR_SPILLWAY_CANCELLED')
  await bounded(until(() => !alive(pid), HANG_MS, 'the worker to be restarted'), 'the restart')
  const after = await bounded(client.submit(fn('pid'), [], { workers: [a.name], pure: false }).result(), 'work on the restarted worker')
  t.not(after, pid)
  t.is(heldBy, pid)
  t.is(await bounded(held.result(), 'the value it held'), after, 'recomputed on the new process, as for any lost worker')
})

test.serial('a worker whose event loop a task blocks is reported unresponsive by schedulerWorkers, and the work it had not started runs elsewhere', async (t) => {
  const dir = scratch(t)
  const [a, b] = await byName(client)
  const marker = join(dir, 'spinning')
  const stop = join(dir, 'stop')
  t.teardown(() => writeFileSync(stop, ''))
  const spinning = client.submit(fn('spin'), [marker, stop], { workers: [a.name], pure: false })
  await until(() => existsSync(marker), 20_000, 'the spin to start')
  // Sent ahead to both workers: some wait behind the spin.
  const rest = Array.from({ length: 12 }, (_, i) => client.submit(fn('sleep'), [50, i], { pure: false }))
  const aHandle = client.scheduler.workers.get(a.address)!
  await until(() => aHandle.processing.size > 1, 20_000, 'work queued behind the spin')
  const workers = await bounded(schedulerWorkers(client), 'schedulerWorkers with a blocked worker')
  t.true(workers[a.address].unresponsive)
  t.false(workers[b.address].unresponsive)
  t.deepEqual(await bounded(client.gather(rest), 'the work sent ahead to the blocked worker'), Array.from({ length: 12 }, (_, i) => i))
  t.true(existsSync(marker) && !existsSync(stop), 'all ran while the worker was still blocked')
  writeFileSync(stop, '')
  t.is(await bounded(spinning.result(), 'the spin, once it may stop'), 'stopped')
  await bounded(until(async () => !(await schedulerWorkers(client))[a.address]?.unresponsive, HANG_MS, 'the worker to answer again'), 'recovery')
})
