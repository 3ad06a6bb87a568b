import test from 'ava'
import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import { networkInterfaces } from 'node:os'
import {
  clusterReport,
  clusterView,
  ConfigError,
  dashboardBanner,
  renderMetrics,
  RingBuffer,
  schedulerWorkers,
  startDashboard,
  TimelineSampler,
  workerInMemoryBytes,
  workerSpillBytes,
  GIB,
  type ClusterView,
  type SetupResult,
  type TimelineJSON,
} from 'spillway'
import { dashboardCluster, http, listeningAddresses, parseProm, pressure, promValue, settle } from './dashboard-helpers'

// One pressured cluster for the endpoint tests: starting one costs seconds.
let shared: SetupResult | undefined
let pressured: Promise<void> | undefined

async function pressuredCluster(): Promise<SetupResult> {
  shared ??= await dashboardCluster()
  pressured ??= pressure(shared.client).then(() => settle(shared!.client))
  await pressured
  return shared
}

test.after.always(async () => {
  await shared?.client.close()
  await shared?.cluster.close()
})

const url = (s: SetupResult, path: string) => new URL(path, s.client.dashboardLink).toString()

function externalAddresses(): string[] {
  const out: string[] = []
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      // Link-local IPv6 needs a scope id to connect to; it says nothing more than the rest.
      if (!a.internal && !(a.family === 'IPv6' && a.address.startsWith('fe80'))) out.push(a.address)
    }
  }
  return out
}

function tryConnect(host: string, port: number): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const s = connect({ host, port })
    s.setTimeout(5000)
    s.once('connect', () => {
      s.destroy()
      resolve('connected')
    })
    s.once('timeout', () => {
      s.destroy()
      resolve('ETIMEDOUT')
    })
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
  })
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port
      srv.close(() => resolve(port))
    })
  })
}

test('/api/workers and /metrics agree with clusterReport and schedulerWorkers under spill', async (t) => {
  const s = await pressuredCluster()
  const report = await clusterReport(s.client)
  const workers = await schedulerWorkers(s.client)
  const [api, metrics] = await Promise.all([http(url(s, '/api/workers')), http(url(s, '/metrics'))])
  t.is(api.status, 200)
  t.is(metrics.status, 200)
  t.regex(String(metrics.headers['content-type']), /^text\/plain; version=0\.0\.4/)
  const view = JSON.parse(api.body) as ClusterView
  const prom = parseProm(metrics.body)

  t.true(report.totalSpillGib > 0, 'the workload spills')
  const addresses = Object.keys(workers).sort()
  t.deepEqual(view.workers.map((r) => r.address).sort(), addresses)
  t.deepEqual(view.workers.map((r) => r.slot).sort(), [0, 1])
  let promSpill = 0
  let promManaged = 0
  for (const addr of addresses) {
    const m = workers[addr].metrics
    const row = view.workers.find((r) => r.address === addr)!
    t.true(workerSpillBytes(m) > 0, `${addr} spilled`)
    t.is(row.spilledBytes.disk, workerSpillBytes(m), `${addr} spill in JSON`)
    t.is(row.inMemoryBytes, workerInMemoryBytes(m), `${addr} memory in JSON`)
    t.is(row.memoryLimit, workers[addr].memoryLimit)
    t.is(row.status, 'running')
    t.is(row.unmanagedBytes, Math.max(0, row.rss - row.inMemoryBytes))
    t.is(row.marks.target, row.thresholds.target * row.memoryLimit)
    const spilled = promValue(prom, 'spillway_worker_memory_bytes', { worker: addr, type: 'spilled' })
    const managed = promValue(prom, 'spillway_worker_memory_bytes', { worker: addr, type: 'managed' })
    const unmanaged = promValue(prom, 'spillway_worker_memory_bytes', { worker: addr, type: 'unmanaged' })
    const rss = promValue(prom, 'spillway_worker_rss_bytes', { worker: addr })!
    t.is(spilled, workerSpillBytes(m), `${addr} spill in /metrics`)
    t.is(managed, workerInMemoryBytes(m), `${addr} memory in /metrics`)
    t.is(unmanaged, Math.max(0, rss - managed!))
    t.is(promValue(prom, 'spillway_worker_spill_count_total', { worker: addr }), (m as { spillCount: number }).spillCount)
    t.true(promValue(prom, 'spillway_worker_spill_bytes_total', { worker: addr })! >= spilled!)
    t.true(promValue(prom, 'spillway_worker_spill_seconds_total', { worker: addr })! > 0)
    promSpill += spilled!
    promManaged += managed!
  }
  t.is(promSpill, Math.round(report.totalSpillGib * GIB))
  t.is(promManaged, Math.round(report.totalMemoryGib * GIB))
  t.is(view.totals.spillBytes, promSpill)
  t.is(promValue(prom, 'spillway_workers'), report.workers)
  t.is(promValue(prom, 'spillway_tasks', { state: 'memory' }), 100)
  t.is(promValue(prom, 'spillway_tasks', { state: 'queued' }), 0)
  t.is(promValue(prom, 'spillway_tasks_submitted_total'), report.totalTasks)
  t.deepEqual(view.tasks.byState, { queued: 0, processing: 0, memory: 100, erred: 0 })
  t.is(view.tasks.groups.length, 1)
  t.is(view.tasks.groups[0].memory, 100)
  t.is(view.codec, 'lz4')
  t.is(view.spillDir, s.tempDir)
  for (const [name, f] of prom) {
    t.truthy(f.help, `${name} has HELP`)
    t.true(f.type === 'gauge' || f.type === 'counter', `${name} has TYPE`)
    if (f.type === 'counter') t.true(name.endsWith('_total'), `${name} is a counter named _total`)
  }
})

test('/api/timeline holds the sampled memory and spill, bounded', async (t) => {
  const s = await pressuredCluster()
  const res = await http(url(s, '/api/timeline'))
  t.is(res.status, 200)
  const tl = JSON.parse(res.body) as TimelineJSON
  t.is(tl.intervalMs, 500)
  t.true(tl.points.length >= 2 && tl.points.length <= tl.capacity)
  const times = tl.points.map((p) => p.time)
  t.deepEqual(times, [...times].sort((a, b) => a - b))
  const last = tl.points[tl.points.length - 1]
  t.true(last.spillBytes > 0, 'spill shows in the timeline')
  t.is(last.workers, 2)
  t.is(Object.keys(last.perWorker).length, 2)
  t.is(
    last.spillBytes,
    Object.values(last.perWorker).reduce((a, w) => a + w.spillBytes, 0),
  )
  t.true(tl.points.some((p) => p.spillBytes === 0), 'the timeline starts before the spill')
})

test('the ring buffer keeps only the newest samples', (t) => {
  const r = new RingBuffer<number>(3)
  t.deepEqual(r.toArray(), [])
  t.is(r.last(), undefined)
  for (let i = 1; i <= 7; i++) r.push(i)
  t.deepEqual(r.toArray(), [5, 6, 7])
  t.is(r.size, 3)
  t.is(r.last(), 7)
  for (const bad of [0, -1, 1.5, NaN, 2 ** 32, '3']) {
    const err = t.throws(() => new RingBuffer(bad as number), { instanceOf: ConfigError })
    t.is(err!.code, 'ERR_SPILLWAY_INVALID_CONFIG')
    t.deepEqual(err!.problems.map((p) => p.field), ['capacity'], String(bad))
  }
})

test('timeline options are checked: intervalMs ≥ 1 ms (0 would spin the event loop) and a positive capacity', (t) => {
  // Options are checked before the scheduler is ever read.
  const scheduler = undefined as unknown as ConstructorParameters<typeof TimelineSampler>[0]
  for (const intervalMs of [0, -5, 0.5, NaN, Infinity, '500']) {
    const err = t.throws(() => new TimelineSampler(scheduler, { intervalMs: intervalMs as number }), { instanceOf: ConfigError })
    t.is(err!.code, 'ERR_SPILLWAY_INVALID_CONFIG')
    t.deepEqual(err!.problems.map((p) => p.field), ['intervalMs'], String(intervalMs))
    t.regex(err!.message, /intervalMs: got .*; allowed: a finite number of milliseconds ≥ 1/)
  }
  const both = t.throws(() => new TimelineSampler(scheduler, { intervalMs: 0, capacity: 0 }), { instanceOf: ConfigError })
  t.deepEqual(both!.problems.map((p) => p.field), ['intervalMs', 'capacity'])
  t.regex(both!.message, /capacity: got 0; allowed: an integer number of samples/)
})

test('/events streams live updates as Server-Sent Events', async (t) => {
  const s = await pressuredCluster()
  const controller = new AbortController()
  const res = await fetch(url(s, '/events'), { signal: controller.signal })
  t.is(res.status, 200)
  t.regex(res.headers.get('content-type') ?? '', /^text\/event-stream/)
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buf = ''
  const events: { view: ClusterView; sample: { time: number } | null }[] = []
  try {
    while (events.length < 3) {
      const { value, done } = await reader.read()
      if (done) break
      buf += decoder.decode(value, { stream: true })
      let i
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i)
        buf = buf.slice(i + 2)
        if (!block.startsWith('event: update')) continue
        events.push(JSON.parse(block.split('\n').find((l) => l.startsWith('data: '))!.slice(6)))
      }
    }
  } finally {
    controller.abort()
  }
  t.is(events.length, 3)
  for (const e of events) {
    t.is(e.view.workers.length, 2)
    t.true(e.view.workers.every((w) => w.spilledBytes.disk > 0))
  }
  // After the first (sent on connect), each event carries a new sample.
  t.true(events[2].sample!.time > events[1].sample!.time)
})

test('read-only: unknown paths are 404, other methods 405 with Allow, HEAD has no body', async (t) => {
  const s = await pressuredCluster()
  const before = { tasks: s.client.scheduler.tasks.size, workers: s.cluster.workers().join(), thresholds: JSON.stringify(s.client.scheduler.thresholds) }
  const missing = await http(url(s, '/nope'))
  t.is(missing.status, 404)
  t.is((await http(url(s, '/api/workers/extra'))).status, 404)
  for (const path of ['/', '/api/workers', '/api/timeline', '/metrics', '/events', '/nope']) {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await http(url(s, path), method)
      t.is(r.status, 405, `${method} ${path}`)
      t.is(r.headers.allow, 'GET, HEAD', `${method} ${path} Allow`)
    }
  }
  for (const path of ['/', '/app.js', '/style.css', '/vendor/uPlot.iife.min.js', '/api/workers', '/metrics', '/events']) {
    const r = await http(url(s, path), 'HEAD')
    t.is(r.status, 200, `HEAD ${path}`)
    t.is(r.body, '', `HEAD ${path} has no body`)
  }
  const page = await http(url(s, '/'))
  t.regex(String(page.headers['content-type']), /^text\/html/)
  t.regex(page.body, /<script src="\/vendor\/uPlot\.iife\.min\.js">/)
  t.regex((await http(url(s, '/vendor/uPlot.iife.min.js'))).body, /uPlot/)
  t.is((await http(url(s, '/api/workers'), 'GET', { Host: 'attacker.example:80' })).status, 403, 'loopback dashboard refuses foreign Host names')
  t.deepEqual(
    { tasks: s.client.scheduler.tasks.size, workers: s.cluster.workers().join(), thresholds: JSON.stringify(s.client.scheduler.thresholds) },
    before,
  )
})

test('the dashboard listens on 127.0.0.1 only by default', async (t) => {
  const s = await pressuredCluster()
  const link = new URL(s.client.dashboardLink!)
  t.is(link.hostname, '127.0.0.1')
  const port = Number(link.port)
  t.deepEqual(listeningAddresses(port), ['127.0.0.1'])
  t.is(await tryConnect('127.0.0.1', port), 'connected')
  const external = externalAddresses()
  if (!external.length) t.log('no non-loopback interface on this machine: only the bound address was checked')
  for (const a of external) t.not(await tryConnect(a, port), 'connected', `reachable on ${a}`)
})

test('an address asked for is bound, and reachable there', async (t) => {
  const external = externalAddresses().filter((a) => !a.includes(':'))
  if (!external.length) return t.pass('no non-loopback IPv4 interface to bind')
  const s = await pressuredCluster()
  const d = await startDashboard(s.client, { address: external[0] })
  t.teardown(() => d.close())
  t.is(d.url, `http://${external[0]}:${d.port}/`)
  t.deepEqual(listeningAddresses(d.port), [external[0]])
  t.is(await tryConnect(external[0], d.port), 'connected')
  t.not(await tryConnect('127.0.0.1', d.port), 'connected')
  t.is((await http(new URL('/metrics', d.url).toString())).status, 200)
  await d.close()
  await d.close()
  t.not(await tryConnect(external[0], d.port), 'connected')
})

test('client.close() and cluster.close() both stop the dashboard; twice is harmless', async (t) => {
  const port = await freePort()
  const a = await dashboardCluster({ dashboardPort: port })
  t.teardown(() => a.cluster.close())
  t.is(a.client.dashboardLink, `http://127.0.0.1:${port}/`)
  t.is((await http(`${a.client.dashboardLink}api/workers`)).status, 200)
  await a.client.close()
  t.not(await tryConnect('127.0.0.1', port), 'connected')
  await a.client.close()
  await a.cluster.close()

  const b = await dashboardCluster()
  t.teardown(() => b.cluster.close())
  const bPort = Number(new URL(b.client.dashboardLink!).port)
  t.is(await tryConnect('127.0.0.1', bPort), 'connected')
  await b.cluster.close()
  t.not(await tryConnect('127.0.0.1', bPort), 'connected')
  t.deepEqual(listeningAddresses(bPort), [])
  await b.client.close()
  await b.cluster.close()
})

test('dashboard: false starts no server; a taken port falls back to a free one', async (t) => {
  const off = await dashboardCluster({ dashboard: false })
  t.teardown(() => off.cluster.close())
  t.is(off.client.dashboardLink, undefined)
  await off.cluster.close()

  const blocker: Server = createServer()
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => blocker.close())
  const taken = (blocker.address() as { port: number }).port
  const s = await dashboardCluster({ dashboardPort: taken })
  t.teardown(() => s.cluster.close())
  const port = Number(new URL(s.client.dashboardLink!).port)
  t.not(port, taken)
  t.is((await http(`${s.client.dashboardLink}metrics`)).status, 200)
})

test('the banner prints the URL and a tunnel that reaches the bound address', (t) => {
  const loop = dashboardBanner('http://127.0.0.1:4321/', 4321, '127.0.0.1', 'node17')
  t.is(
    loop,
    ['Dashboard: http://127.0.0.1:4321/', '  from your machine: ssh -N -L 8787:127.0.0.1:4321 -J <login node> node17', '  then open http://localhost:8787'].join('\n'),
  )
  const all = dashboardBanner('http://node17:4321/', 4321, '0.0.0.0', 'node17')
  t.regex(all, /ssh -N -L 8787:node17:4321 <login node>\n {2}then open http:\/\/localhost:8787$/)
})

test('a killed worker shows as restarting, then as its new incarnation', async (t) => {
  const s = await dashboardCluster()
  t.teardown(() => s.cluster.close())
  const victim = s.cluster.nannies[0].worker!
  // Read the view the moment the scheduler drops the worker: the nanny has
  // not started the replacement yet, so this is not a race.
  const atRemoval = new Promise<ClusterView>((resolve) => {
    s.client.scheduler.once('worker-removed', () => resolve(clusterView(s.client, 'test')))
  })
  process.kill(victim.pid, 'SIGKILL')
  const during = await atRemoval
  const row = during.workers.find((r) => r.slot === 0)!
  t.is(row.status, 'restarting')
  t.is(row.address, null)
  t.is(row.inMemoryBytes, 0)
  t.is(during.workers.find((r) => r.slot === 1)!.status, 'running')
  t.false(renderMetrics(during).includes(victim.address), 'a dead worker leaves /metrics')

  let view = during
  for (let i = 0; i < 300 && view.workers[0].status !== 'running'; i++) {
    await new Promise((r) => setTimeout(r, 100))
    view = JSON.parse((await http(url(s, '/api/workers'))).body) as ClusterView
  }
  t.is(view.workers[0].status, 'running', 'the nanny restarted the worker')
  t.not(view.workers[0].address, victim.address)
  t.is(view.workers[0].restarts, 1)
  const prom = parseProm((await http(url(s, '/metrics'))).body)
  t.is(promValue(prom, 'spillway_nanny_restarts_total', { slot: '0' }), 1)
  t.is(promValue(prom, 'spillway_lost_workers_total'), 1)
})
