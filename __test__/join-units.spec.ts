// How a worker joins when the scheduler sheds connections: the backoff
// between tries, the retry of a handshake cut short against a real listener,
// the coded errors that say what was seen, and the descriptor estimate that
// must not refuse everyone under a flood of short handshakes.
import test from 'ava'
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { backoff } from '../src/base/backoff'
import { Admission } from '../src/comm/admission'
import { acceptHandshake } from '../src/comm/handshake'
import { joinScheduler } from '../src/comm/join'
import { SocketTransport } from '../src/comm/socket-transport'

/** Mulberry32: a seeded uniform [0, 1). */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32
  }
}

test('backoff: each wait lies between half and all of a cap that doubles from firstMs to maxMs; the jitter spreads workers apart', (t) => {
  for (let seed = 1; seed <= 200; seed++) {
    const b = backoff({ firstMs: 100, maxMs: 5_000, random: seeded(seed) })
    const caps = [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000, 5000]
    for (const [i, cap] of caps.entries()) {
      const w = b.next()
      t.true(w >= cap / 2 && w <= cap, `seed ${seed}, try ${i}: ${w} outside [${cap / 2}, ${cap}]`)
    }
    t.is(b.failures, caps.length)
  }
  // Ten workers cut off together come back at different times.
  const firsts = Array.from({ length: 10 }, (_, i) => backoff({ random: seeded(1000 + i) }).next())
  t.true(new Set(firsts).size >= 8, `${firsts}`)
})

const HELLO = { host: 'here', pid: process.pid, name: 'w-0', nthreads: 1, memoryLimit: 2 ** 30, spillDir: '/tmp', dataAddress: 'tcp://127.0.0.1:0' }

/** A scheduler's door in miniature: `drop(n)` says whether to drop the n-th connection as soon as it is accepted. */
async function door(secret: Buffer, drop: (n: number) => boolean): Promise<{ address: string; accepted: () => number; server: Server }> {
  let n = 0
  const sockets = new Set<Socket>()
  const server = createServer(async (s) => {
    sockets.add(s)
    s.on('error', () => {})
    if (drop(n++)) return void s.destroy()
    try {
      const rest = await acceptHandshake(s, secret, 5000)
      const link = new SocketTransport<any, any>(s, rest)
      const hello = await link.next(5000)
      link.send({ kind: 'welcome', address: hello.name, pingMs: 1000, ttlMs: 4000 })
    } catch {
      s.destroy()
    }
  })
  server.on('close', () => sockets.forEach((s) => s.destroy()))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as { port: number }
  return { address: `tcp://127.0.0.1:${port}`, accepted: () => n, server }
}

test('join: a handshake dropped by the scheduler is tried again with backoff until it passes', async (t) => {
  const secret = randomBytes(32)
  const d = await door(secret, (n) => n < 3)
  t.teardown(() => void d.server.close())
  const { transport } = await joinScheduler(d.address, secret, HELLO, 20_000, {}, backoff({ firstMs: 20, maxMs: 200 }))
  t.is(d.accepted(), 4, 'three dropped, the fourth passed')
  transport.destroy()
})

test('join: a scheduler that drops every handshake is ERR_SPILLWAY_NO_SCHEDULER after the join timeout, saying it dropped them, not that the secret is wrong', async (t) => {
  const secret = randomBytes(32)
  const d = await door(secret, () => true)
  t.teardown(() => void d.server.close())
  const start = Date.now()
  const e: any = await t.throwsAsync(joinScheduler(d.address, secret, HELLO, 1500, {}, backoff({ firstMs: 20, maxMs: 200 })))
  t.is(e.code, 'ERR_SPILLWAY_NO_SCHEDULER')
  t.regex(e.message, new RegExp(`the scheduler at ${d.address.replace(/\./g, '\\.')} refused or dropped this worker's handshake \\d+ times in \\d+ s \\(last: peer closed the connection during the handshake\\)`))
  t.notRegex(e.message, /secret/)
  t.true(e.details.tries >= 3 && d.accepted() === e.details.tries, `${e.details.tries} tries, ${d.accepted()} accepted`)
  t.true(Date.now() - start < 15_000)
})

test('join: a scheduler that refuses the proof is ERR_SPILLWAY_AUTH at the first try, naming the secret', async (t) => {
  const d = await door(randomBytes(32), () => false)
  t.teardown(() => void d.server.close())
  const e: any = await t.throwsAsync(joinScheduler(d.address, randomBytes(32), HELLO, 20_000, {}, backoff({ firstMs: 20, maxMs: 200 })))
  t.is(e.code, 'ERR_SPILLWAY_AUTH')
  t.regex(e.message, /refused this worker's proof of the cluster secret: this worker's secret is not the cluster's \(use the FILE\.secret written beside the scheduler file\)/)
  t.is(d.accepted(), 1, 'not tried again')
})

/** `n` accepted connections from this process to itself; their client ends are closed with them. */
async function accepted(n: number, localAddress = '127.0.0.1'): Promise<{ sockets: Socket[]; close(): void }> {
  const sockets: Socket[] = []
  const clients: Socket[] = []
  const server = createServer((s) => void sockets.push(s))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as { port: number }
  for (let i = 0; i < n; i++) clients.push(connect({ port, host: '127.0.0.1', localAddress }).on('error', () => {}))
  while (sockets.length < n) await new Promise((r) => setTimeout(r, 10))
  return { sockets, close: () => (server.close(), [...sockets, ...clients].forEach((s) => s.destroy())) }
}

function openNow(): number {
  return readdirSync('/proc/self/fd').length
}

test('admission: a flood of handshakes that end at once never adds up to the descriptor limit; near it, the busiest address gives up its oldest for a newcomer', async (t) => {
  if (process.platform !== 'linux') return t.pass('descriptors are counted from /proc')
  const flood = await accepted(20)
  const lone = await accepted(1, '127.0.0.2')
  t.teardown(() => (flood.close(), lone.close()))
  const { sockets } = flood
  const refused: string[] = []
  // Headroom of 60 descriptors: thousands of short handshakes within one count must all pass.
  const a = new Admission({ perPeer: 1000, total: 1000, reserveFds: 0, maxFds: openNow() + 60 }, (_s, why) => refused.push(why))
  for (let i = 0; i < 5000; i++) {
    const s = sockets[i % sockets.length]
    t.true(a.admit(s), `handshake ${i} refused: ${refused[0]}`)
    a.done(s)
  }
  t.deepEqual(refused, [])
  // Held open, they count: with room for 5, each newcomer past them takes the place of the oldest.
  const tight = new Admission({ perPeer: 1000, total: 1000, reserveFds: 0, maxFds: openNow() + 5 }, (_s, why) => refused.push(why))
  for (const s of sockets.slice(0, 10)) t.true(tight.admit(s))
  t.is(tight.pending, 5)
  t.is(refused.length, 5)
  t.is(refused[0], 'the scheduler is near its file descriptor limit: the oldest handshake of the busiest address dropped for a newcomer')
  t.true(sockets.slice(0, 5).every((s) => s.destroyed) && !sockets.slice(5, 10).some((s) => s.destroyed), 'the oldest went')
  // A worker from another address gets in, and the flood sheds its own handshakes, not the worker's.
  t.true(tight.admit(lone.sockets[0]))
  for (const s of sockets.slice(10)) t.true(tight.admit(s))
  t.false(lone.sockets[0].destroyed)
  t.is(tight.pending, 5)
  // With no room and nothing to shed, a newcomer is refused.
  const full = new Admission({ perPeer: 1000, total: 1000, reserveFds: 0, maxFds: openNow() }, (_s, why) => refused.push(why))
  const before = refused.length
  t.false(full.admit(sockets[19]))
  t.deepEqual(refused.slice(before), ['the scheduler is near its file descriptor limit'])
})
