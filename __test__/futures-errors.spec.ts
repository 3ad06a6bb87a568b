import test from 'ava'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SpillwayError, type Client } from 'spillway'
import { cluster, sharedCluster, until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks')
const esm = (name: string) => ({ module: join(FIX, 'esm.mjs'), name })

// One cluster for the tests that leave its workers as they found them (the
// same workers as cluster()'s); the tests run one at a time.
let client!: Client
sharedCluster(test, (c) => (client = c), { reserveMemGb: 1 })

test.serial('a thrown error rejects the Future with ERR_SPILLWAY_TASK keeping the remote name, message and stack; dependents fail with it', async (t) => {
  const bad = client.submit(esm('boom'), ['out of range here'])
  const dependent = client.submit(esm('double'), [bad])
  const err = (await t.throwsAsync(() => bad.result())) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_TASK')
  t.regex(err.message, /RangeError: out of range here/)
  const remote = err.details.remote as { name: string; message: string; stack: string }
  t.is(remote.name, 'RangeError')
  t.is(remote.message, 'out of range here')
  t.regex(remote.stack, /esm\.mjs/, 'the stack points into the user module on the worker')
  t.regex(err.stack!, /esm\.mjs/)
  t.is(bad.status, 'error')
  t.is(await bad.exception(), err)
  const depErr = (await t.throwsAsync(() => dependent.result())) as SpillwayError
  t.is(depErr.code, 'ERR_SPILLWAY_TASK')
  t.is(dependent.status, 'error')
})

test.serial('retries rerun a task that threw', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-retry-'))
  await t.throwsAsync(() => client.submit(esm('flaky'), [join(dir, 'a')]).result(), { message: /first try fails/ })
  t.is(await client.submit(esm('flaky'), [join(dir, 'b')], { retries: 1 }).result(), 'second try works')
})

test.serial('cancel drops queued work, aborts the running task’s signal and fails dependents with ERR_SPILLWAY_CANCELLED', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-cancel-'))
  const marker = join(dir, 'aborted')
  const running = client.submit(esm('untilCancelled'), [marker])
  const dependent = client.submit(esm('double'), [running])
  await until(() => existsSync(`${marker}.started`), 10_000, 'the task to run')
  running.cancel()
  t.is(running.status, 'cancelled')
  await t.throwsAsync(() => running.result(), { code: 'ERR_SPILLWAY_CANCELLED' })
  await t.throwsAsync(() => dependent.result(), { code: 'ERR_SPILLWAY_CANCELLED' })
  t.is(dependent.status, 'cancelled')
  await until(() => existsSync(marker), 10_000, 'the task to see its signal abort')
  t.is(readFileSync(marker, 'utf8'), running.key)
  // The cluster goes on.
  t.is(await client.submit(esm('double'), [4]).result(), 8)
})

test.serial('a shipped function that uses its enclosing scope fails with a message that says so and points to modules', async (t) => {
  const factor = 3
  const err = (await t.throwsAsync(() => client.submit((x: number) => x * factor, [2]).result())) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_TASK')
  t.regex(err.message, /factor is not defined/)
  t.regex(err.message, /enclosing scope/)
  t.regex(err.message, /module/)
})

test.serial('bad input gets a coded error naming it', async (t) => {
  const invalid = { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' }
  t.throws(() => client.submit(42 as any), { ...invalid, message: /fn/ })
  t.throws(() => client.submit(Math.max), { ...invalid, message: /native function/ })
  t.throws(() => client.submit(((x: number) => x).bind(null)), { ...invalid, message: /bound function/ })
  t.throws(() => client.submit(class A {} as any), { ...invalid, message: /class/ })
  t.throws(() => client.submit({ module: './relative.mjs' }), { ...invalid, message: /fn\.module/ })
  t.throws(() => client.submit((x: number) => x, 5 as any), { ...invalid, message: /args/ })
  t.throws(() => client.submit((x: number) => x, [1], { retries: -1 }), { ...invalid, message: /options\.retries/ })
  t.throws(() => client.submit((x: number) => x, [1], { bogus: 1 } as any), { ...invalid, message: /options\.bogus/ })
  t.throws(() => client.map((x: number) => x, 5 as any), { ...invalid, message: /items/ })

  const missingModule = client.submit({ module: join(FIX, 'nope.mjs'), name: 'f' }, [])
  await t.throwsAsync(() => missingModule.result(), { code: 'ERR_SPILLWAY_MODULE_NOT_FOUND', message: /nope\.mjs/ })
  const missingExport = client.submit(esm('noSuchExport'), [])
  await t.throwsAsync(() => missingExport.result(), { code: 'ERR_SPILLWAY_EXPORT_NOT_FOUND', message: /noSuchExport.*double/s })
  await t.throwsAsync(() => client.submit(esm('notAFunction'), []).result(), { code: 'ERR_SPILLWAY_EXPORT_NOT_FOUND', message: /number/ })

  const released = client.submit(esm('double'), [1])
  await released.result()
  released.release()
  t.is(released.status, 'lost')
  t.throws(() => client.submit(esm('double'), [released]), { ...invalid, message: /released/ })
  await t.throwsAsync(() => released.result(), { code: 'ERR_SPILLWAY_RELEASED' })

  // A second cluster: a Future of another client's.
  const other = await cluster(t)
  const foreign = other.client.submit(esm('double'), [1])
  t.throws(() => client.submit(esm('double'), [foreign]), { ...invalid, message: /another client|this client/ })
  await t.throwsAsync(() => client.gather([foreign]), invalid)
})

test.serial('tasks sent ahead behind a task that kills its worker three times are not counted for it: only the running one ends in KilledWorkerError', async (t) => {
  // Its own cluster: the task kills its worker three times. One worker of one thread: the rest wait behind it.
  const { client } = await cluster(t, { maxWorkers: 1, threadsPerWorker: 1 })
  // Placed first on every incarnation (priority), the others sent ahead behind it each time.
  const hog = client.submit(esm('hog'), [], { priority: 10, pure: false })
  const behind = [1, 2, 3].map((i) => client.submit(esm('double'), [i], { pure: false }))
  const err = (await t.throwsAsync(() => hog.result())) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_KILLED_WORKER')
  t.deepEqual(await client.gather(behind), [2, 4, 6])
})

test.serial('a user task that kills 3 workers fails with KilledWorkerError naming it; its dependents fail too and the cluster goes on', async (t) => {
  // Its own cluster: the task kills three workers.
  const { client } = await cluster(t)
  const hog = client.submit(esm('hog'), [])
  const after = client.submit(esm('double'), [hog])
  const err = (await t.throwsAsync(() => hog.result())) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_KILLED_WORKER')
  t.is((err as any).key, hog.key)
  await t.throwsAsync(() => after.result(), { code: 'ERR_SPILLWAY_KILLED_WORKER' })
  t.is(await client.submit(esm('double'), [21]).result(), 42)
})
