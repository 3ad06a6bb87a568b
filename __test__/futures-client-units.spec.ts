// The pure pieces behind Dask's client API: gather's 'skip' pruning, map's
// argument split and zip.
import test from 'ava'
import { extract, dropAt, place } from '../src/wire/nesting'
import { callsOf, mapArguments } from '../src/futures/map-calls'

const isMark = (v: unknown): v is string => typeof v === 'string' && v.startsWith('#')

test('dropAt removes array elements (indices shift once, all found first) and object properties, leaving the caller’s value alone', (t) => {
  const input = { a: ['#0', 1, '#2', '#3', 4], b: { c: '#c', d: 5 }, e: [['#x', 6]], same: [7] }
  const { value, slots } = extract(input, isMark)
  let out = value
  for (const s of slots) out = place(out, s.path, `v${s.item}`)
  const failed = slots.filter((s) => ['#0', '#3', '#c', '#x'].includes(s.item)).map((s) => s.path)
  t.deepEqual(dropAt(out, failed), { a: [1, 'v#2', 4], b: { d: 5 }, e: [[6]], same: [7] })
  t.deepEqual(input.a, ['#0', 1, '#2', '#3', 4], 'the containers changed were extract’s copies')
  t.is(dropAt('#', [[]]), undefined)
})

test('mapArguments takes a last non-iterable object as options, and callsOf zips to the shortest, closing the iterators', (t) => {
  t.deepEqual(mapArguments([[1], { pure: true }]), { iterables: [[1]], options: { pure: true } })
  t.deepEqual(mapArguments([[1], [2]]), { iterables: [[1], [2]], options: undefined })
  t.deepEqual(mapArguments([{ x: 1 }]), { iterables: [{ x: 1 }], options: undefined }, 'a lone object is the items (and refused as such)')
  t.deepEqual(mapArguments([[1], new Set([2])]), { iterables: [[1], new Set([2])], options: undefined })
  t.deepEqual(callsOf([[1, 2, 3]]), [[1], [2], [3]])
  let closed = false
  function* endless() {
    try {
      for (let i = 0; ; i++) yield i
    } finally {
      closed = true
    }
  }
  t.deepEqual(callsOf([endless(), 'ab'.split('')]), [
    [0, 'a'],
    [1, 'b'],
  ])
  t.true(closed)
  t.deepEqual(callsOf([[], [1]]), [])
  t.throws(() => callsOf([[1], 'ab']), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /iterables\[1\]/ })
  t.throws(() => callsOf([]), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /items/ })
})
