// The dashboard under load and under a broken peer: a cap on /events
// streams, one view per tick shared by every stream, and /metrics printing
// only numbers a scraper can store, with label values escaped.
import test from 'ava'
import { join } from 'node:path'
import { clusterView, renderMetrics, setupClient, startDashboard } from 'spillway'
import { until } from './cluster-helpers'
import { http } from './dashboard-helpers'
import { scratch } from './helpers'
import { fakeWorker, goodMetrics } from './peer-helpers'

async function cluster(t: any) {
  const file = join(scratch(t), 'scheduler.json')
  const setup = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1, dashboard: false, silenceLogs: true, schedulerFile: file })
  t.teardown(async () => {
    await setup.client.close()
    await setup.cluster.close()
  })
  return { ...setup, file }
}

/** An /events stream and the count of updates it has had. */
async function stream(url: string) {
  const controller = new AbortController()
  const res = await fetch(url, { signal: controller.signal })
  const s = { status: res.status, updates: 0, close: () => controller.abort() }
  if (res.status !== 200) return s
  void (async () => {
    const reader = res.body!.getReader()
    const dec = new TextDecoder()
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
      if (done) return
      s.updates += dec.decode(value, { stream: true }).split('event: update').length - 1
    }
  })()
  return s
}

test('/events: streams past the cap are refused with 503; every stream gets each update, and each tick computes one view for all of them', async (t) => {
  t.timeout(60_000)
  const { client } = await cluster(t)
  const d = await startDashboard(client, { maxStreams: 3, intervalMs: 50 })
  t.teardown(() => d.close())
  let ticks = 0
  d.sampler.onSample(() => ticks++)
  const streams = await Promise.all([1, 2, 3].map(() => stream(`${d.url}events`)))
  t.teardown(() => streams.forEach((s) => s.close()))
  t.deepEqual(streams.map((s) => s.status), [200, 200, 200])
  const extra = await stream(`${d.url}events`)
  t.is(extra.status, 503)
  t.is(d.stats.refusedStreams, 1)
  await until(() => streams.every((s) => s.updates >= 6), 30_000, 'six updates on every stream')
  const updates = streams.reduce((n, s) => n + s.updates, 0)
  // One view per tick, and one for the first stream (before any tick).
  t.true(d.stats.viewsComputed <= ticks + 1, `${d.stats.viewsComputed} views for ${ticks} ticks`)
  t.true(d.stats.viewsComputed < updates, `${d.stats.viewsComputed} views for ${updates} updates`)
  // A closed stream frees its place.
  streams[0].close()
  await until(() => d.stats.streams === 2, 10_000, 'the stream to close')
  const again = await stream(`${d.url}events`)
  t.is(again.status, 200)
  again.close()
})

test('/metrics: label values escaped, numbers from a peer checked; a peer sending NaN or negative figures is dropped and nothing of it is printed', async (t) => {
  t.timeout(60_000)
  const { client, cluster: c, file } = await cluster(t)
  const d = await startDashboard(client, {})
  t.teardown(() => d.close())
  // The worker's label is its data address, which a peer names.
  const peer = await fakeWorker(file, 'odd', { dataAddress: 'tcp://127.0.0.1:9/"a\\b\nc' })
  await until(() => client.scheduler.workers.size === 2, 20_000, 'the fake peer joins')
  peer.link.send({ kind: 'heartbeat', metrics: { ...goodMetrics(), rss: 123_456_789 } })
  await until(async () => /spillway_worker_rss_bytes\{[^}]*\} 123456789$/m.test((await http(`${d.url}metrics`)).body), 20_000, 'the heartbeat to show')
  const body = (await http(`${d.url}metrics`)).body
  t.true(body.split('\n').includes('spillway_worker_threads{worker="tcp://127.0.0.1:9/\\"a\\\\b\\nc"} 8'), body)
  // Every line is a comment or `name{labels} value`, with quotes, backslashes and newlines escaped.
  for (const line of body.trimEnd().split('\n')) t.regex(line, /^(#.*|[a-z_]+(\{([a-z]+="([^"\\\n]|\\["\\n])*",?)*\})? [0-9.e+]+)$/, line)

  peer.link.send({ kind: 'heartbeat', metrics: { ...goodMetrics(), rss: NaN, managedBytes: -5 } })
  await peer.closed
  await until(() => client.scheduler.workers.size === 1, 20_000, 'the fake peer is dropped')
  t.is(c.malformed.total, 1)
  const after = (await http(`${d.url}metrics`)).body
  t.notRegex(after, /NaN|Inf|123456789| -\d/)

  // Figures that went wrong on this side are left out too, not printed as NaN.
  const view = clusterView(client)
  view.workers[0].rss = NaN
  view.workers[0].managedBytes = -1
  view.workers[0].spillSeconds = Infinity
  const text = renderMetrics(view)
  t.notRegex(text, /NaN|Inf| -1$/m)
  t.regex(text, /^spillway_worker_threads\{/m)
})
