// A worker's malloc thresholds by its memory limit (src/deploy/malloc-env.ts):
// Dask's 64 KiB thresholds (the fork's defaults) below 1 GiB, larger ones
// that keep a task's freed pages for the next task from 1 GiB.
import test from 'ava'
import { mallocEnv } from '../src/deploy/malloc-env'

test('below 1 GiB a worker keeps the 64 KiB thresholds; from 1 GiB chunks up to 8 MiB come from the heap and a 32nd of the limit stays mapped', (t) => {
  t.deepEqual(mallocEnv(160 * 2 ** 20, {}), {})
  t.deepEqual(mallocEnv(2 ** 30 - 1, {}), {})
  t.deepEqual(mallocEnv(2 ** 30, {}), { MALLOC_MMAP_THRESHOLD_: String(8 * 2 ** 20), MALLOC_TRIM_THRESHOLD_: String(32 * 2 ** 20) })
  t.deepEqual(mallocEnv(4 * 2 ** 30, {}), { MALLOC_MMAP_THRESHOLD_: String(8 * 2 ** 20), MALLOC_TRIM_THRESHOLD_: String(128 * 2 ** 20) })
})

test("thresholds set in the cluster's environment win, each on its own", (t) => {
  const old = { MALLOC_MMAP_THRESHOLD_: '65536', MALLOC_TRIM_THRESHOLD_: '65536' }
  t.deepEqual(mallocEnv(2 ** 30, old), old)
  t.deepEqual(mallocEnv(2 ** 30, { MALLOC_TRIM_THRESHOLD_: '0' }), { MALLOC_MMAP_THRESHOLD_: String(8 * 2 ** 20), MALLOC_TRIM_THRESHOLD_: '0' })
  t.deepEqual(mallocEnv(160 * 2 ** 20, { MALLOC_MMAP_THRESHOLD_: '1048576' }), { MALLOC_MMAP_THRESHOLD_: '1048576' })
})
