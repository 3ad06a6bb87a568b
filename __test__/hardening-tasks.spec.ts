// Hardening (issue 21): what a task, a key or a second client does ends in
// the right value or a coded error, never a rerun loop or a wrong value.

import test from 'ava'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Client, SpillwayError } from 'spillway'
import { cluster, GIB, sharedCluster } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks')
const esm = (name: string) => ({ module: join(FIX, 'esm.mjs'), name })

// One cluster for the tests that leave its workers as they found them (the
// same workers as cluster()'s: 1 GiB each); the tests run one at a time.
let client!: Client
sharedCluster(test, (c) => (client = c), { reserveMemGb: 1 })

test.serial('a task error whose code is one of spillway’s own fails once with ERR_SPILLWAY_TASK, its code kept in details.remote.code', async (t) => {
  t.timeout(60_000)
  for (const code of ['ERR_SPILLWAY_MISSING_DEP', 'ERR_SPILLWAY_WORKER_STUCK', 'ERR_SPILLWAY_SPILL_FULL', 'ERR_SPILLWAY_CANCELLED']) {
    const f = client.submit(
      (c: string) => {
        throw Object.assign(new Error(`spoofed ${c}`), { code: c, missing: ['nothing'] })
      },
      [code],
      { pure: false },
    )
    const err = (await t.throwsAsync(() => f.result())) as SpillwayError
    t.is(err.code, 'ERR_SPILLWAY_TASK', code)
    t.is((err.details.remote as { code?: string }).code, code)
    t.regex(err.message, new RegExp(`spoofed ${code}`))
    t.is(err.details.missing, undefined)
    t.is(f.status, 'error')
  }
  t.is(await client.submit(esm('double'), [21]).result(), 42)
})

test.serial('keys with lone surrogates are refused at submit and map with ERR_SPILLWAY_INVALID_ARGUMENT naming the key', async (t) => {
  const id = (x: number) => x
  for (const key of ['k-\ud800', 'k-\udfff', '\udc00\ud800']) {
    const err = t.throws(() => client.submit(id, [1], { key })) as SpillwayError
    t.is(err.code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
    t.deepEqual((err.details.problems as Array<{ field: string; value: unknown }>).map((p) => [p.field, p.value]), [['options.key', key]])
  }
  const mapErr = t.throws(() => client.map(id, [1, 2], { key: ['fine', 'k-\ud800'] })) as SpillwayError
  t.is(mapErr.code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.deepEqual((mapErr.details.problems as Array<{ field: string; value: unknown }>).map((p) => [p.field, p.value]), [['options.key[1]', 'k-\ud800']])
  // Whole characters, astral ones included, are keys like any other and stay apart.
  const a = client.submit(id, [1], { key: 'k-\ud83d\ude00' })
  const b = client.submit(id, [2], { key: 'k-\ud83d\ude01' })
  t.deepEqual(await client.gather([a, b]), [1, 2])
})

test.serial("a key named '__proto__' and an argument object with an own '__proto__' entry work like any other", async (t) => {
  const p = client.submit((x: number) => x + 1, [1], { key: '__proto__' })
  t.is(await client.submit((x: number) => x * 10, [p]).result(), 20)
  t.is(await client.submit((x: number) => x * 10, [p], { key: 'constructor' }).result(), 20)
  const arg: Record<string, unknown> = {}
  Object.defineProperty(arg, '__proto__', { value: p, enumerable: true, writable: true, configurable: true })
  const got = await client.submit((o: Record<string, unknown>) => [Object.keys(o), Object.getOwnPropertyDescriptor(o, '__proto__')?.value], [arg]).result()
  t.deepEqual(got, [['__proto__'], 2])
})

test.serial('work submitted on a failed Future fails with that Future’s error; on a cancelled one with ERR_SPILLWAY_CANCELLED', async (t) => {
  // Its own cluster: it cancels a running 60 s sleep, whose worker is restarted once the cancel's grace ends.
  const { client } = await cluster(t)
  const bad = client.submit(esm('boom'), ['the dependency’s own message'])
  await bad.exception()
  const dependent = client.submit(esm('double'), [bad])
  const err = (await t.throwsAsync(() => dependent.result())) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_TASK')
  t.regex(err.message, /the dependency’s own message/)
  t.is(dependent.status, 'error')
  t.is(await dependent.exception(), err)

  const slow = client.submit(esm('sleep'), [60_000, 1], { pure: false })
  slow.cancel()
  const onCancelled = client.submit(esm('double'), [slow])
  await t.throwsAsync(() => onCancelled.result(), { code: 'ERR_SPILLWAY_CANCELLED' })
  t.is(onCancelled.status, 'cancelled')
})

test.serial('await client.scatter(v) resolves with a finished Future', async (t) => {
  const f = await client.scatter({ some: 'data' })
  t.is(f.status, 'finished')
  const g = await client.scatter(Buffer.alloc(4 << 20, 7))
  t.is(g.status, 'finished')
  t.is(((await g.result()) as Buffer)[123], 7)
})

test.serial('result() of a Future nobody keeps holds its key until the value arrives, through garbage collection', async (t) => {
  t.timeout(120_000)
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const make = (n: number) => Buffer.alloc(n, 3)
  for (let i = 0; i < 6; i++) {
    let settled = false
    // No reference to the Future is kept: only its result() is awaited.
    const p = client.submit(make, [(48 << 20) + i], { pure: false }).result()
    p.then(
      () => (settled = true),
      () => (settled = true),
    )
    // A full collection every few milliseconds while the value is on its
    // way (one per turn of the loop burned both cores for 40 s).
    while (!settled) {
      gc()
      await new Promise((r) => setTimeout(r, 5))
    }
    const v = (await p) as Buffer
    t.is(v.length, (48 << 20) + i)
    t.is(v[v.length - 1], 3)
  }
})

test.serial('cancel is per client: one client’s cancel leaves another client’s Future of the same pure key running', async (t) => {
  t.timeout(60_000)
  // Its own cluster: it cancels a running 60 s sleep, whose worker is restarted once the cancel's grace ends.
  const { client, cluster: c } = await cluster(t)
  const other = new Client(c)
  t.teardown(() => other.close())
  const a = client.submit(esm('sleep'), [1500, 'slept'])
  const b = other.submit(esm('sleep'), [1500, 'slept'])
  t.is(a.key, b.key)
  a.cancel()
  t.is(a.status, 'cancelled')
  await t.throwsAsync(() => a.result(), { code: 'ERR_SPILLWAY_CANCELLED' })
  t.is(((await a.exception()) as SpillwayError).code, 'ERR_SPILLWAY_CANCELLED')
  t.throws(() => client.submit(esm('double'), [a]), { code: 'ERR_SPILLWAY_CANCELLED' })
  t.is(await b.result(), 'slept')
  t.is(b.status, 'finished')
  // The last holder's cancel still cancels on the cluster.
  const only = other.submit(esm('sleep'), [60_000, 'never'], { pure: false })
  only.cancel()
  await t.throwsAsync(() => only.result(), { code: 'ERR_SPILLWAY_CANCELLED' })
  // A cancelled Future let go of its hold: releasing it later frees nothing twice.
  a.release()
  t.is(await b.result(), 'slept')
})

test.serial('a 100 000-character error message arrives cut, keeping its start and the stack', async (t) => {
  const f = client.submit(
    (n: number) => {
      throw new TypeError(`START${'x'.repeat(n)}END`)
    },
    [100_000],
    { pure: false },
  )
  const err = (await t.throwsAsync(() => f.result())) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_TASK')
  t.true(err.message.length < 10_000, `message of ${err.message.length} characters`)
  t.regex(err.message, /TypeError: STARTx+… \(\d+ more characters cut\)/)
  t.notRegex(err.message, /END/)
  const remote = err.details.remote as { name: string; message: string; stack: string }
  t.is(remote.name, 'TypeError')
  t.true(remote.message.startsWith('STARTxxx'))
  t.true(remote.message.length < 10_000)
  t.true(remote.stack.length < 30_000, `stack of ${remote.stack.length} characters`)
  t.regex(remote.stack, /^TypeError: STARTx+…[^\n]*\n\s+at /)
})

test.serial('a task that exits its worker is named as such, not as one that needs more memory', async (t) => {
  t.timeout(120_000)
  // Its own cluster: the task exits its worker.
  const { client } = await cluster(t)
  const f = client.submit(() => process.exit(0), [], { pure: false })
  const err = (await t.throwsAsync(() => f.result())) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_KILLED_WORKER')
  t.regex(err.message, new RegExp(`the worker exited with code 0 while running ${JSON.stringify(f.key).replace(/[-[\]{}()*+?.,\\^$|#]/g, '\\$&')}`))
  t.notRegex(err.message, /more memory/)
  t.is(err.details.reason, 'exited with code 0')
  t.is(await client.submit(esm('double'), [5]).result(), 10)
})

test.serial('a scatter too large for any worker is refused with ERR_SPILLWAY_TOO_LARGE naming both sizes', async (t) => {
  // Never written: the pages of a fresh allocation stay unbacked.
  const big = Buffer.allocUnsafeSlow(Math.floor(1.25 * GIB))
  const err = (await t.throwsAsync(() => client.scatter(big))) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_TOO_LARGE')
  t.is(err.details.bytes, big.length)
  t.is(err.details.limitBytes, GIB)
  t.regex(err.message, new RegExp(`${big.length} bytes \\(1\\.25 GiB\\).*1\\.00 GiB`))
  const huge = Buffer.allocUnsafeSlow(2 * GIB)
  t.is(((await t.throwsAsync(() => client.scatter(huge))) as SpillwayError).code, 'ERR_SPILLWAY_TOO_LARGE')
  t.is(await (await client.scatter(Buffer.alloc(16))).result().then((b) => (b as Buffer).length), 16)
})
