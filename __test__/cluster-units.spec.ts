import test from 'ava'
import { decideThresholds, memoryAction, random } from 'spillway'

const T = { target: 0.75, spill: 0.85, pause: 0.92, terminate: 0.98 }
const L = 1000

test('memoryAction spills down to target above the spill threshold and pauses above pause', (t) => {
  t.deepEqual(memoryAction(700, L, T, 600), { status: 'running' })
  t.deepEqual(memoryAction(900, L, T, 800), { status: 'running', evictTo: 650 })
  t.deepEqual(memoryAction(950, L, T, 800), { status: 'paused', evictTo: 600 })
  t.deepEqual(memoryAction(950, L, T, 0), { status: 'paused' })
})

test('decideThresholds: auto loosens on high spill, tightens on low, and clamps', (t) => {
  const o = { strategy: 'auto' as const, spillThresholdGib: 0.5, tightenBy: 0.05, loosenBy: 0.05 }
  t.deepEqual(decideThresholds({ target: 0.75, spill: 0.85 }, 1.76, o).after, { target: 0.8, spill: 0.9 })
  t.deepEqual(decideThresholds({ target: 0.75, spill: 0.85 }, 0, o).after, { target: 0.7, spill: 0.8 })
  t.deepEqual(decideThresholds({ target: 0.9, spill: 0.95 }, 9, o).after, { target: 0.9, spill: 0.95 })
  t.deepEqual(decideThresholds({ target: 0.4, spill: 0.5 }, 0, o).after, { target: 0.4, spill: 0.5 })
  t.is(decideThresholds({ target: 0.75, spill: 0.85 }, 9, { ...o, strategy: 'off' }).action, 'none')
  t.deepEqual(decideThresholds({ target: 0.75, spill: 0.85 }, 9, { ...o, strategy: 'tighten' }).after, { target: 0.7, spill: 0.8 })
})

test('arrays: chunk grid, keys and task sizes; bad shapes name the field', (t) => {
  const x = random.random([5, 7], { chunks: [2, 3], seed: 1 })
  t.deepEqual(x.numblocks, [3, 3])
  t.is(x.nchunks, 9)
  const sizes = x.tasks().map((s) => s.task.spec.len)
  t.deepEqual(sizes, [6, 6, 2, 6, 6, 2, 3, 3, 1])
  t.is(sizes.reduce((a, b) => a + b), 35)
  t.is(x.name, random.random([5, 7], { chunks: [2, 3], seed: 1 }).name, 'same definition, same keys')
  t.not(x.name, random.random([5, 7], { chunks: [2, 3], seed: 2 }).name)
  const err = t.throws(() => random.randint(5, 1, [0, -1], { chunks: 'x' as any }))
  for (const f of ['high', 'shape', 'chunks']) t.regex(err!.message, new RegExp(`${f}:`))
})

test('recommendChunks keeps chunks within the per-worker budget and the shape', async (t) => {
  const { recommendChunks } = await import('spillway')
  t.deepEqual(recommendChunks([20_000, 20_000]), [4096, 4096])
  const c = recommendChunks([20_000, 20_000], { memoryLimit: 2 ** 30 })
  t.true(c[0] * c[1] * 8 <= (2 ** 30 * 0.75) / 8, `${c}`)
  t.deepEqual(recommendChunks([10, 1_000_000_000]), [10, 1677721])
  t.deepEqual(recommendChunks([100]), [100])
  t.throws(() => recommendChunks([0]), { code: 'ERR_SPILLWAY_INVALID_CONFIG' })
})
