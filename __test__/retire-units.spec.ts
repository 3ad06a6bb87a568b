import test from 'ava'
import { assign } from '../src/scheduler/retire'
import { pausedByUnmanaged, roomOn } from '../src/scheduler/copy-values'
import { TaskRecord, WorkerHandle } from '../src/scheduler/state'
import type { WorkerMetrics } from '../src/wire/protocol'

const MB = 2 ** 20
const GB = 2 ** 30

function worker(name: string, m: Partial<WorkerMetrics>, limit = GB): WorkerHandle {
  const w = new WorkerHandle(`ipc://${name}`, name, 1, limit, undefined as any)
  w.metrics = { rss: 0.2 * GB, memoryBytes: 0, status: 'running', thresholds: { target: 0.6, spill: 0.7, pause: 0.8, terminate: 0.95 }, spillCapReached: false, ...m } as WorkerMetrics
  return w
}

function value(key: string, nbytes: number): TaskRecord {
  const t = new TaskRecord(key, undefined, nbytes)
  t.nbytes = nbytes
  return t
}

test('room: memory up to pause, plus the spill disk (free space within maxSpill, none at the cap or with spill off)', (t) => {
  const roomOf = (w: WorkerHandle, pause: number) => Math.round(roomOn(w, pause))
  t.is(roomOf(worker('a', { spillFreeBytes: 100 * MB }), 0.92), Math.round(0.6 * GB) + 100 * MB)
  t.is(roomOf(worker('b', {}), 0.92), Infinity, 'a filesystem that cannot say is not taken as full')
  t.is(roomOf(worker('c', { spillFreeBytes: 100 * MB, spillCapReached: true }), 0.92), Math.round(0.6 * GB))
  t.is(roomOf(worker('d', { spillFreeBytes: 100 * MB, thresholds: { target: false, spill: false, pause: 0.8, terminate: 0.95 } }), 0.92), Math.round(0.6 * GB))
  t.is(roomOf(worker('e', { rss: 0.9 * GB, spillFreeBytes: 0 }), 0.92), 0, 'past pause: no memory room')
  const none = new WorkerHandle('ipc://f', 'f', 1, GB, undefined as any)
  t.is(roomOn(none, 0.92), 0, 'no heartbeat yet: no room known')
})

test('assign: largest values first, each to the receiver with most room left; short when they do not fit', (t) => {
  const a = worker('a', { spillFreeBytes: 0 })
  const b = worker('b', { spillFreeBytes: 0, rss: 0.4 * GB })
  const vs = [value('x', 300 * MB), value('y', 200 * MB), value('z', 100 * MB)]
  const plan = assign(vs, [a, b], 0.8)
  if ('short' in plan) return t.fail()
  t.deepEqual([...plan.to.get(a)!].map((v) => v.key), ['x', 'z'])
  t.deepEqual([...plan.to.get(b)!].map((v) => v.key), ['y'])
  const tooBig = assign([value('w', 700 * MB)], [a, b], 0.8)
  t.deepEqual(tooBig, { short: 700 * MB })
  t.deepEqual(assign(vs, [], 0.8), { short: 600 * MB })
})

test('paused by unmanaged memory: even with every managed value spilled it would stay past pause', (t) => {
  t.true(pausedByUnmanaged(worker('a', { status: 'paused', rss: 0.9 * GB, memoryBytes: 0.05 * GB }).metrics!, GB))
  t.false(pausedByUnmanaged(worker('b', { status: 'paused', rss: 0.9 * GB, memoryBytes: 0.5 * GB }).metrics!, GB), 'spilling gets it back under')
  t.false(pausedByUnmanaged(worker('c', { status: 'running', rss: 0.9 * GB }).metrics!, GB))
})
