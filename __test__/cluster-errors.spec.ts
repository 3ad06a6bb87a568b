import test from 'ava'
import { fork } from 'node:child_process'
import { dirname, join } from 'node:path'
import { random, Reduction, SpillwayError } from 'spillway'
import { workerError } from '../src/comm/rpc'
import { cluster } from './cluster-helpers'

test('a bad op reaches the caller as a coded error naming it; spillway codes pass through the worker unchanged', async (t) => {
  const { client } = await cluster(t)
  const x = await client.persist(random.random([40_000], { chunks: 10_000, seed: 1 }))
  await x.wait()
  // Reduction is public and a JS caller can pass anything as the op.
  const err = await t.throwsAsync(() => client.compute(new Reduction(x, 42 as any)))
  t.true(err instanceof SpillwayError, String(err))
  t.is((err as SpillwayError).code, 'ERR_SPILLWAY_INVALID_ARGUMENT')
  t.regex(err!.message, /op/)
  await t.throwsAsync(() => client.compute(new Reduction(x, 'median' as any)), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
})

test("a worker failure with a foreign code (ENOENT, the binding's StringExpected) becomes ERR_SPILLWAY_TASK, the original code in details", (t) => {
  for (const code of ['StringExpected', 'ENOENT']) {
    const err = workerError({ code, message: 'boom' })
    t.is(err.code, 'ERR_SPILLWAY_TASK')
    t.is(err.details.originalCode, code)
    t.regex(err.message, /boom/)
  }
  t.is(workerError({ code: 'ERR_SPILLWAY_IO', message: 'x' }).code, 'ERR_SPILLWAY_IO')
  t.deepEqual(workerError({ message: 'no code' }).details, {})
})

test('a worker process asked for work before start answers with ERR_SPILLWAY_PROTOCOL', async (t) => {
  const child = fork(join(dirname(require.resolve('spillway')), 'worker', 'entry.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  t.teardown(() => child.kill())
  const reply = new Promise<any>((resolve) => child.once('message', resolve))
  child.send({ kind: 'request', id: 1, request: { op: 'metrics' } })
  const msg = await reply
  t.like(msg, { kind: 'reply', id: 1, ok: false, error: { code: 'ERR_SPILLWAY_PROTOCOL' } })
  t.regex(msg.error.message, /metrics before start/)
})
