// The estimate of items' memory once deserialized, against V8's own count.
import test from 'ava'
import { deserialize, serialize, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { heapOfItems } from '../src/worker/collections/shuffle/heap-estimate'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Heap and array-buffer bytes `items` take once deserialized, measured after full collections. */
function measured(items: unknown[]): { est: number; real: number; serialized: number } {
  const buf = serialize(items)
  gc()
  gc()
  const before = process.memoryUsage()
  const back = deserialize(buf) as unknown[]
  gc()
  gc()
  const after = process.memoryUsage()
  const real = after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers)
  return { est: heapOfItems(back), real, serialized: buf.length }
}

const N = 100_000
const shapes: [string, (i: number) => unknown][] = [
  ['small records', (i) => ({ k: i % 97, v: i, s: 'abcdefgh' })],
  ['NDJSON-like records', (i) => ({ id: i, user: `u${i % 1000}`, ts: 1_700_000_000 + i, amount: i * 0.5, tag: 'x' })],
  ['pairs', (i) => [i % 97, `abc${i}`]],
  ['floats', (i) => i + 0.5],
  ['long strings', (i) => 'a'.repeat(99) + (i % 10)],
  ['wide strings', (i) => `äöü€${i}`],
  ['nested', (i) => ({ a: { b: [1, 2, 3], c: 'xy' }, d: i })],
  ['dates', (i) => ({ t: new Date(i), n: i })],
]

for (const [name, make] of shapes) {
  test.serial(`${name}: the estimate is within 25% of the memory V8 reports`, (t) => {
    const { est, real, serialized } = measured(Array.from({ length: N }, (_, i) => make(i)))
    t.true(est > 0.75 * real && est < 1.25 * real, `estimated ${est}, measured ${real} (serialized ${serialized})`)
  })
}

test('small records take several times their serialized bytes: the bound a serialized figure alone would miss', (t) => {
  const items = Array.from({ length: 10_000 }, (_, i) => ({ k: i % 97, v: i, s: 'abcdefgh' }))
  t.true(heapOfItems(items) > 2.5 * serialize(items).length)
})

test('binary payloads count their bytes', (t) => {
  const items = Array.from({ length: 100 }, () => Buffer.alloc(65536))
  const est = heapOfItems(items)
  t.true(est >= 100 * 65536 && est < 1.05 * 100 * 65536, String(est))
})
