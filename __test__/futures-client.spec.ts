// Dask's client API over Futures: fireAndForget, retry, done callbacks,
// gather's errors, AsCompleted, map over several iterables, scatter's shapes
// and options. One small cluster for the whole file.
import test from 'ava'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AsCompleted, asCompleted, fireAndForget, Future, type Client, type SpillwayError } from 'spillway'
import { sharedCluster, until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks')
const fx = (name: string) => ({ module: join(FIX, 'client-api.mjs'), name })
const flaky = { module: join(FIX, 'esm.mjs'), name: 'flaky' }
const double = { module: join(FIX, 'esm.mjs'), name: 'double' }

let client: Client
// Two workers (the helper's default sizing), so broadcast has somewhere to copy to.
sharedCluster(test, (c) => (client = c))

const scratch = (t: { teardown(fn: () => void): void }) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-futures-client-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('fireAndForget: the task runs though every Future of it is dropped, and its value is freed after; one not fired is dropped', async (t) => {
  const dir = scratch(t)
  const gate = client.submit(fx('sleep'), [300, 'gate'], { pure: false })
  const kept = client.submit(fx('mark'), [join(dir, 'kept'), gate])
  const dropped = client.submit(fx('mark'), [join(dir, 'dropped'), gate])
  fireAndForget([kept])
  const [keptKey, droppedKey] = [kept.key, dropped.key]
  for (const f of [kept, dropped, gate]) f.release()
  t.false(client.scheduler.tasks.has(droppedKey), 'a dropped task no one holds is forgotten')
  t.true(client.scheduler.tasks.has(keptKey), 'the cluster holds the fired task')
  await until(() => existsSync(join(dir, 'kept')), 20_000, 'the fired task to run')
  await until(() => !client.scheduler.tasks.has(keptKey), 20_000, 'its value to be freed')
  t.false(existsSync(join(dir, 'dropped')))
  t.throws(() => fireAndForget([1]), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /futures\[0\]/ })
  t.throws(() => fireAndForget(kept), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /released/ })
})

test('retry runs an erred task again with its erred inputs, and a cancelled one; holds still balance', async (t) => {
  const dir = scratch(t)
  const f = client.submit(flaky, [join(dir, 'a')])
  await t.throwsAsync(() => f.result(), { code: 'ERR_SPILLWAY_TASK', message: /first try fails/ })
  f.retry()
  t.is(await f.result(), 'second try works')
  t.is(f.status, 'finished')
  f.retry() // a finished Future is left as it is
  t.is(await f.result(), 'second try works')

  const input = client.submit(flaky, [join(dir, 'b')])
  const dependent = client.submit(fx('repeat'), [2, input])
  await t.throwsAsync(() => dependent.result(), { message: /first try fails/ })
  input.release()
  client.retry([dependent])
  t.is(await dependent.result(), 'second try workssecond try works')

  const slow = client.submit(fx('sleep'), [200, 'slept'], { pure: false })
  slow.cancel()
  t.is(slow.status, 'cancelled')
  slow.retry()
  t.is(await slow.result(), 'slept')
  const key = slow.key
  slow.release()
  t.false(client.scheduler.tasks.has(key), 'the retried record took over the Future’s hold and let go of it')
  t.throws(() => slow.retry(), { code: 'ERR_SPILLWAY_RELEASED' })
  t.throws(() => client.retry([1 as any]), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
  const scattered = await client.scatter(5)
  scattered.cancel()
  t.throws(() => scattered.retry(), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /scatter it again/ })
})

test('addDoneCallback calls back once when a task finishes, fails or is cancelled, later if already done; a throwing callback is reported', async (t) => {
  const calls: string[] = []
  const record = (f: Future) => void calls.push(`${f.key.split('-')[0]}:${f.status}`)
  const ok = client.submit(fx('sleep'), [50, 1], { key: 'ok-1' })
  const bad = client.submit(fx('boom'), ['no'], { key: 'bad-1' })
  const cancelled = client.submit(fx('sleep'), [60_000, 1], { key: 'cancelled-1' })
  ok.addDoneCallback(record)
  bad.addDoneCallback(record)
  cancelled.addDoneCallback(record)
  cancelled.cancel()
  await Promise.all([ok, bad, cancelled].map((f) => f.settled()))
  await until(() => calls.length === 3, 5_000, 'three callbacks')
  t.deepEqual(calls.sort(), ['bad:error', 'cancelled:cancelled', 'ok:finished'])
  ok.addDoneCallback(record)
  t.is(calls.length, 3, 'not called synchronously')
  await until(() => calls.length === 4, 5_000, 'the callback of a done Future')

  const reported: unknown[][] = []
  const original = console.error
  console.error = (...args: unknown[]) => void reported.push(args)
  t.teardown(() => (console.error = original))
  ok.addDoneCallback(() => {
    throw new Error('callback bug')
  })
  ok.addDoneCallback(async () => Promise.reject(new Error('async callback bug')))
  await until(() => reported.length === 2, 5_000, 'both failures reported')
  console.error = original
  t.regex(String(reported[0][0]), /ok-1/)
  t.deepEqual(reported.map((r) => (r[1] as Error).message).sort(), ['async callback bug', 'callback bug'])
  t.is(await client.submit(fx('sleep'), [1, 'still works'], { pure: false }).result(), 'still works')
  t.is(calls.length, 4, 'called once each')
  t.throws(() => ok.addDoneCallback('no' as any), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /fn/ })
})

test("gather errors: 'skip' leaves failed Futures out of arrays and objects; 'raise' rejects; a bad value names errors", async (t) => {
  const [a, b] = client.map(double, [1, 2])
  const bad = client.submit(fx('boom'), ['gather'])
  const cancelled = client.submit(fx('sleep'), [60_000, 0], { pure: false })
  cancelled.cancel()
  t.deepEqual(await client.gather([a, bad, b, cancelled], { errors: 'skip' }), [2, 4])
  t.deepEqual(await client.gather({ a, bad, nested: [bad, { b, c: cancelled }], plain: 'x' }, { errors: 'skip' }), { a: 2, nested: [{ b: 4 }], plain: 'x' })
  t.is(await client.gather(bad, { errors: 'skip' }), undefined)
  await t.throwsAsync(() => client.gather([a, bad]), { message: /gather/ })
  await t.throwsAsync(() => client.gather([a, bad], { errors: 'raise' }), { message: /gather/ })
  const err = (await t.throwsAsync(() => client.gather([a], { errors: 'ignore' as any }))) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.regex(err.message, /options\.errors/)
  t.regex(err.message, /'raise' or 'skip'/)
  await t.throwsAsync(() => client.gather([a], { error: 'skip' } as any), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.error/ })
})

test('AsCompleted: add and update while iterating, count and isEmpty, withResults throws at a failed one, batches', async (t) => {
  const first = client.submit(fx('sleep'), [20, 'first'], { pure: false })
  const ac = new AsCompleted([first])
  t.is(ac.count(), 1)
  t.false(ac.isEmpty())
  const seen: string[] = []
  for await (const f of ac) {
    seen.push(await f.result())
    if (seen.length === 1) ac.add(client.submit(fx('sleep'), [20, 'added'], { pure: false }))
    if (seen.length === 2) ac.update([client.submit(fx('sleep'), [20, 'updated'], { pure: false })])
  }
  t.deepEqual(seen, ['first', 'added', 'updated'])
  t.true(ac.isEmpty())

  const ok = client.submit(fx('sleep'), [10, 'ok'], { pure: false })
  const bad = client.submit(fx('boom'), ['as completed'])
  const slow = client.submit(fx('sleep'), [300, 'slow'], { pure: false })
  const results = asCompleted([ok], { withResults: true })
  const got: unknown[] = []
  await t.throwsAsync(async () => {
    for await (const [f, v] of results) {
      got.push([f.key === ok.key, v])
      // Added once it has failed (its error is in before the slow one's value); both are yielded by this loop.
      await bad.settled()
      results.update([bad, slow])
    }
  }, { message: /as completed/ })
  t.deepEqual(got, [[true, 'ok']])
  t.is(results.count(), 1, 'the failed one was taken; the slow one is left')
  const after = await results.next()
  t.deepEqual(after.value, [slow, 'slow'])
  t.true((await results.next()).done)

  const all = [10, 20, 30].map((ms) => client.submit(fx('sleep'), [ms, ms], { pure: false }))
  await Promise.all(all.map((f) => f.settled()))
  const batched = new AsCompleted(all)
  const late = client.submit(fx('sleep'), [200, 'late'], { pure: false })
  batched.add(late)
  const batches: number[] = []
  for await (const batch of batched.batches()) batches.push(batch.length)
  t.deepEqual(batches, [3, 1], 'the three done at once in one batch, the late one in the next')
  t.throws(() => new AsCompleted([1 as any]), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
})

test('map over several iterables zips them to the shortest; batchSize submits in batches with the same keys and results', async (t) => {
  const pairs = client.map(fx('repeat'), [1, 2, 3], ['a', 'b'])
  t.deepEqual(await client.gather(pairs), ['a', 'bb'])
  function* forever() {
    for (let i = 1; ; i++) yield i
  }
  t.deepEqual(await client.gather(client.map(fx('repeat'), forever(), ['x', 'y', 'z'], { pure: false })), ['x', 'yy', 'zzz'])
  t.deepEqual(await client.gather(client.map((a: number, b: number) => a * b, [2, 3], [5, 7])), [10, 21])

  const items = [1, 2, 3, 4, 5]
  const whole = client.map(double, items)
  const submit = client.scheduler.submit.bind(client.scheduler)
  const sizes: number[] = []
  client.scheduler.submit = (subs) => (sizes.push(subs.length), submit(subs))
  t.teardown(() => void (client.scheduler.submit = submit))
  const batched = client.map(double, items, { batchSize: 2 })
  client.scheduler.submit = submit
  t.deepEqual(sizes, [2, 2, 1])
  t.deepEqual(batched.map((f) => f.key), whole.map((f) => f.key))
  t.deepEqual(await client.gather(batched), [2, 4, 6, 8, 10])
  t.throws(() => client.map(double, items, { batchSize: 0 }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.batchSize/ })
  t.throws(() => client.map(double, [1], 5 as any), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /iterables\[1\]/ })
  t.throws(() => client.map(double, [1, 2], { key: ['one'] }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.key/ })
})

test('scatter: an array gives a Future per element, a plain object one value unless split, a Buffer one value; hash keys by content', async (t) => {
  const parts = await client.scatter([1, 'two', { three: 3 }])
  t.true(Array.isArray(parts))
  t.is(parts.length, 3)
  t.true(parts.every((f) => f instanceof Future && f.status === 'finished'))
  t.deepEqual(await client.gather(parts), [1, 'two', { three: 3 }])
  const whole = await client.scatter([1, 2], { split: false })
  t.true(whole instanceof Future)
  t.deepEqual(await whole.result(), [1, 2])
  const dict = await client.scatter({ x: 1, y: [2] }, { split: true })
  t.deepEqual(Object.keys(dict), ['x', 'y'])
  t.deepEqual(await client.gather(dict), { x: 1, y: [2] })
  const one = await client.scatter({ x: 1 })
  t.true(one instanceof Future)
  const buf = await client.scatter(Buffer.from('bytes'))
  t.true(buf instanceof Future)
  t.true(((await buf.result()) as Buffer).equals(Buffer.from('bytes')))

  const [a, b] = await client.scatter([7, 7])
  t.is(a.key, b.key, 'the same value, the same key')
  const [c, d] = await client.scatter([7, 7], { hash: false })
  t.not(c.key, d.key)
  t.not(c.key, a.key)
  t.is(await client.submit((x: number, y: number) => x + y, [c, d]).result(), 14)

  for (const [options, field] of [
    [{ hash: 'yes' }, 'options.hash'],
    [{ brodcast: true }, 'options.brodcast'],
    [{ split: 1 }, 'options.split'],
    [{ workers: 'w' }, 'options.workers'],
  ] as const) {
    const err = (await t.throwsAsync(() => client.scatter(1, options as any))) as SpillwayError
    t.is(err.code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
    t.true(err.message.includes(field), err.message)
  }
  await t.throwsAsync(() => client.scatter(5, { split: true } as any), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.split/ })
  await t.throwsAsync(() => client.scatter([1, a]), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /values\[1\]/ })
})

test('scatter broadcast: the value is held on every worker; each element of an array is', async (t) => {
  await client.waitForWorkers(2)
  const f = await client.scatter(Buffer.alloc(1024, 1), { broadcast: true })
  const r = client.scheduler.tasks.get(f.key)!
  const holders = new Set([r.worker, ...(r.replicas ?? [])].map((w) => w?.address))
  t.is(holders.size, 2)
  t.is(await client.submit((b: Buffer) => b.length, [f]).result(), 1024)
  const plain = await client.scatter(Buffer.alloc(1024, 2))
  t.is(client.scheduler.tasks.get(plain.key)!.replicas?.size ?? 0, 0, 'no copies without broadcast')
  for (const part of await client.scatter([1, 2], { broadcast: true, hash: false })) t.is(client.scheduler.tasks.get(part.key)!.replicas?.size, 1)
  await t.throwsAsync(() => client.scatter(2, { broadcast: true, workers: ['worker-0'] }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.workers/ })
})
