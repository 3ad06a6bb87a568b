// A peer that holds the cluster's secret and sends what no worker would: the
// connection closes, the peer is lost as a dead worker is, the scheduler
// lives (an exception here would end this test process) and the cluster
// still computes exact results.
import test from 'ava'
import { join } from 'node:path'
import { setupClient } from 'spillway'
import { until } from './cluster-helpers'
import { scratch } from './helpers'
import { authenticated, fakeWorker, goodMetrics } from './peer-helpers'

const SIZE = { workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1, dashboard: false } as const

async function cluster(t: any) {
  const file = join(scratch(t), 'scheduler.json')
  const logged: string[] = []
  const push = (m: string) => void logged.push(m)
  const setup = await setupClient({ ...SIZE, schedulerFile: file, logger: { info: push, warn: push, error: push, debug() {} } })
  t.teardown(async () => {
    await setup.client.close()
    await setup.cluster.close()
  })
  return { ...setup, file, logged }
}

const square = (i: number) => {
  const end = Date.now() + 20
  while (Date.now() < end);
  return i * i
}
const SQUARES = Array.from({ length: 24 }, (_, i) => i)
const EXPECTED = SQUARES.reduce((s, i) => s + i * i, 0)

async function sumOfSquares(client: any): Promise<number> {
  const values: number[] = await client.gather(client.map(square, SQUARES, { pure: false }))
  return values.reduce((a, b) => a + b, 0)
}

test('a run answered with result: null, a heartbeat with metrics: {} and other wrong shapes close that connection; the cluster computes on', async (t) => {
  t.timeout(120_000)
  const { client, cluster: c, file, logged } = await cluster(t)
  const wrong: Array<[string, (p: any) => Promise<void>]> = [
    ['a run answered with result: null', async (p) => {
      const work = sumOfSquares(client)
      const run = await p.nextRequest('run')
      p.link.send({ kind: 'reply', id: run.id, ok: true, result: null })
      await p.closed
      t.is(await work, EXPECTED)
    }],
    ['a heartbeat with metrics: {}', async (p) => p.link.send({ kind: 'heartbeat', metrics: {} })],
    ['a heartbeat with NaN rss', async (p) => p.link.send({ kind: 'heartbeat', metrics: { ...goodMetrics(), rss: NaN } })],
    ['a heartbeat with negative bytes', async (p) => p.link.send({ kind: 'heartbeat', metrics: { ...goodMetrics(), spilledBytes: { memory: -1, disk: 0 } } })],
    ['null', async (p) => p.link.send(null)],
    ['an unknown kind', async (p) => p.link.send({ kind: 'bogus' })],
    ['a reply with a string id', async (p) => p.link.send({ kind: 'reply', id: 'x', ok: true, result: {} })],
    ['a failed reply without its error', async (p) => p.link.send({ kind: 'reply', id: 1, ok: false, error: null })],
    ['a log with a number for its message', async (p) => p.link.send({ kind: 'log', level: 'warn', message: 42 })],
    ['a metrics reply of the wrong shape', async (p) => {
      const refresh = client.scheduler.refreshMetrics()
      const ask = await p.nextRequest('metrics')
      p.link.send({ kind: 'reply', id: ask.id, ok: true, result: { metrics: [] } })
      await refresh
    }],
  ]
  for (const [i, [what, send]] of wrong.entries()) {
    const peer = await fakeWorker(file, `fake-${i}`)
    await until(() => client.scheduler.workers.size === 2, 20_000, `${what}: the fake peer joins`)
    await send(peer)
    await peer.closed
    await until(() => client.scheduler.workers.size === 1, 20_000, `${what}: the fake peer is dropped`)
    t.pass(what)
  }
  t.is(c.malformed.total, wrong.length)
  // A start answered wrongly: the peer never becomes a worker.
  const noStart = await fakeWorker(file, 'fake-start', { start: false })
  const start = await noStart.nextRequest('start')
  noStart.link.send({ kind: 'reply', id: start.id, ok: true, result: null })
  await noStart.closed
  t.is(c.malformed.total, wrong.length + 1)
  t.is(client.scheduler.workers.size, 1)
  t.is(await sumOfSquares(client), EXPECTED)
  // Each reason logged once in full at most, the rest held for the summary.
  const lines = logged.filter((l) => /malformed message/.test(l))
  t.true(lines.length >= 1 && lines.length <= 5, lines.join('\n'))
  t.regex(lines[0], /closed the connection of worker fake-host\/fake-0: it sent a malformed message: reply to run\.result is null; expected an object/)
})

test('a huge length prefix before the hello and after it closes the connection and holds no memory', async (t) => {
  t.timeout(60_000)
  const { client, file } = await cluster(t)
  const prefix = Buffer.alloc(5)
  prefix.writeUInt32BE(2 ** 31, 0)
  const before = process.memoryUsage().arrayBuffers
  // Before the hello: only a hello's size is taken.
  const early = await authenticated(file)
  early.socket.write(prefix)
  await new Promise((r) => early.socket.once('close', r))
  t.true(process.memoryUsage().arrayBuffers - before < 2 ** 28, 'no buffer of the announced size was made')
  // After it: a joined worker's messages are capped too.
  const peer = await fakeWorker(file, 'huge')
  await until(() => client.scheduler.workers.size === 2, 20_000, 'the fake peer joins')
  ;(peer.link as any).socket.write(prefix)
  await peer.closed
  t.true(process.memoryUsage().arrayBuffers - before < 2 ** 28, 'no buffer of the announced size was made')
  await until(() => client.scheduler.workers.size === 1, 20_000, 'the fake peer is dropped')
  t.is(await sumOfSquares(client), EXPECTED)
})
