import test from 'ava'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FrameReader, headed, unhead } from '../src/comm/frames'
import { acceptHandshake, offerHandshake } from '../src/comm/handshake'
import { TaskQueue } from '../src/scheduler/task-queue'
import { TaskRecord } from '../src/scheduler/state'
import { describeFunction } from '../src/wire/functions'
import { extract, place } from '../src/wire/nesting'
import { decodeValue, encodeValue } from '../src/wire/values'

test('values: binary values keep their type and bytes, others round-trip through v8.serialize', (t) => {
  const values: unknown[] = [
    Buffer.from('bytes'),
    new Float64Array([1.5, -2, Math.PI]),
    new Float32Array([1, 2]),
    new Int32Array([-1, 7]),
    new Uint8Array([1, 2, 3]),
    new BigInt64Array([1n, -2n]),
    new Uint16Array([65535]),
    new Uint8Array([9, 8, 7]).buffer,
    { a: 1, b: [2, 'x'], m: new Map([[1, 2]]) },
    'text',
    42,
    null,
    undefined,
  ]
  for (const v of values) {
    const { bytes, format } = encodeValue(v)
    const back = decodeValue(bytes, format)
    t.deepEqual(back, v, `format ${format}`)
    if (ArrayBuffer.isView(v)) t.is((back as object).constructor, v.constructor)
  }
  // A view at an odd offset still decodes (over a copy).
  const f = new Float64Array([1, 2, 3])
  const shifted = new Uint8Array(25)
  shifted.set(new Uint8Array(f.buffer), 1)
  t.deepEqual(decodeValue(shifted.subarray(1), 'raw:float64'), f)
  t.throws(() => decodeValue(new Uint8Array(7), 'raw:float64'), { code: 'ERR_SPILLWAY_CORRUPT_VALUE' })
  t.throws(() => encodeValue(() => 1), { code: 'ERR_SPILLWAY_UNSERIALIZABLE' })
})

test('nesting: Futures found at any depth, replaced, and put back in place', (t) => {
  class F {
    constructor(readonly k: string) {}
  }
  const isF = (v: unknown): v is F => v instanceof F
  const a = new F('a')
  const b = new F('b')
  const untouched = { x: [1, 2] }
  const args = [a, { deep: [1, { b }] }, untouched, 'plain']
  const { value, slots } = extract(args, isF)
  t.deepEqual(slots.map((s) => [s.path, s.item.k]), [
    [[0], 'a'],
    [[1, 'deep', 1, 'b'], 'b'],
  ])
  t.is((value as unknown[])[2], untouched, 'a container without Futures is shared, not copied')
  t.is(args[0], a, 'the caller’s arguments are not changed')
  let out = value
  for (const s of slots) out = place(out, s.path, s.item.k.toUpperCase())
  t.deepEqual(out, ['A', { deep: [1, { b: 'B' }] }, untouched, 'plain'])
  t.deepEqual(extract(a, isF).slots[0].path, [])
  const cyclic: any = { a }
  cyclic.self = cyclic
  t.is(extract(cyclic, isF).slots.length, 1)
})

test('functions: shippable sources are described, the rest refused naming why', (t) => {
  const obj = {
    m(x: number) {
      return x + 1
    },
    async am(x: number) {
      return x
    },
  }
  for (const fn of [(x: number) => x, async (x: number) => x, function named(x: number) { return x }, obj.m, obj.am]) {
    const d = describeFunction(fn)
    t.is(d.kind, 'source')
    if (d.kind === 'source') t.is(typeof new Function(`return (${d.source})`)(), 'function', d.source)
  }
  t.throws(() => describeFunction(Math.max), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /native/ })
  t.throws(() => describeFunction(class X {}), { message: /class/ })
  t.throws(() => describeFunction({ module: 'x', name: '' }), { message: /fn\.name/ })
  t.throws(() => describeFunction({ module: new URL('https://example.invalid/x.js') }), { message: /file: URL/ })
  t.like(describeFunction({ module: '/abs/tasks.mjs', name: 'parse' }), { kind: 'module', specifier: 'file:///abs/tasks.mjs', name: 'parse' })
  t.like(describeFunction({ module: 'some-package' }), { kind: 'module', specifier: 'some-package', name: 'default' })
})

test('task queue: priority first, then submission order; redone tasks first among their priority', (t) => {
  const q = new TaskQueue()
  const mk = (key: string, priority: number, seq: number) => Object.assign(new TaskRecord(key, undefined, 0), { priority, seq })
  for (let i = 0; i < 3000; i++) q.push(mk(`t${i}`, 0, i))
  q.push(mk('urgent', 5, 5000))
  q.push(mk('low', -1, 5001))
  t.is(q.at(0).key, 'urgent')
  t.is(q.removeAt(0).key, 'urgent')
  for (let i = 0; i < 2000; i++) t.is(q.removeAt(0).key, `t${i}`)
  q.pushFront(mk('redo', 0, 1))
  t.is(q.at(0).key, 'redo')
  t.is(q.removeAt(1).key, 't2000')
  t.is(q.length, 1000 - 1 + 1 + 1)
  t.is(q.at(q.length - 1).key, 'low')
})

test('frames survive any split of the stream', (t) => {
  const frames = [Buffer.alloc(0), randomBytes(10), randomBytes(70_000), randomBytes(3 * 2 ** 20)]
  const stream = Buffer.concat(frames.flatMap((f) => [Buffer.from([0, 0, 0, 0].map((_, i) => (f.length >>> (24 - 8 * i)) & 255)), f]))
  for (let trial = 0; trial < 20; trial++) {
    const got: Buffer[] = []
    const r = new FrameReader((f) => got.push(Buffer.from(f)))
    let at = 0
    while (at < stream.length) {
      const n = 1 + Math.floor(Math.random() * (trial % 2 ? 100 : 400_000))
      r.push(stream.subarray(at, at + n))
      at += n
    }
    t.is(got.length, frames.length)
    got.forEach((g, i) => t.true(g.equals(frames[i])))
  }
  const { header, payload } = unhead(Buffer.concat(headed({ id: 1 }, Buffer.from('xyz'))))
  t.deepEqual(header, { id: 1 })
  t.is(payload.toString(), 'xyz')
  t.throws(() => new FrameReader(() => {}, 100).push(Buffer.from([0, 0, 1, 0])), { code: 'ERR_SPILLWAY_PROTOCOL' })
})

async function pair(): Promise<{ server: Socket; client: Socket; done(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-hs-'))
  const path = join(dir, 's.sock')
  return new Promise((resolve) => {
    const srv = createServer((server) => resolve({ server, client, done: () => (srv.close(), rmSync(dir, { recursive: true, force: true })) }))
    let client: Socket
    srv.listen(path, () => (client = connect(path)))
  })
}

test('handshake: both sides prove the secret; a wrong secret or a stranger is refused before anything is decoded', async (t) => {
  const secret = randomBytes(32)
  const ok = await pair()
  const [a, b] = await Promise.all([acceptHandshake(ok.server, secret), offerHandshake(ok.client, secret)])
  t.is(a.length + b.length, 0)
  ok.client.destroy()
  ok.done()

  const wrong = await pair()
  const results = await Promise.allSettled([acceptHandshake(wrong.server, secret), offerHandshake(wrong.client, randomBytes(32), 2000)])
  t.is(results[0].status, 'rejected')
  t.regex(String((results[0] as PromiseRejectedResult).reason.message), /secret/)
  t.is(results[1].status, 'rejected')
  wrong.server.destroy()
  wrong.client.destroy()
  wrong.done()

  const stranger = await pair()
  stranger.client.write(Buffer.alloc(100, 0x41))
  await t.throwsAsync(() => acceptHandshake(stranger.server, secret), { code: 'ERR_SPILLWAY_AUTH' })
  stranger.client.destroy()
  stranger.done()

  const oldPeer = await pair()
  const hello = Buffer.concat([Buffer.from('SPWY'), Buffer.from([99]), randomBytes(32), randomBytes(32)])
  oldPeer.client.write(hello)
  await t.throwsAsync(() => acceptHandshake(oldPeer.server, secret), { code: 'ERR_SPILLWAY_VERSION', message: /version 99/ })
  oldPeer.client.destroy()
  oldPeer.done()
})
