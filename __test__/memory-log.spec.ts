import test from 'ava'
import { MemoryLog, STATUS_EVERY_MS, UNMANAGED_EVERY_MS } from '../src/worker/memory-log'

const GIB = 2 ** 30

test('paused / resumed lines in Dask words, flaps within the interval counted, not logged', (t) => {
  const lines: Array<[string, string]> = []
  const log = new MemoryLog((level, m) => lines.push([level, m]), 2 * GIB)
  log.status('paused', 1.86 * GIB, 0)
  log.status('running', 1.0 * GIB, 100)
  log.status('paused', 1.9 * GIB, 200)
  log.status('running', 0.92 * GIB, STATUS_EVERY_MS + 1)
  t.is(lines.length, 2)
  t.deepEqual(lines[0], ['warn', 'worker is at 93% memory usage. Pausing worker. Process memory: 1.86 GiB -- Worker memory limit: 2.00 GiB'])
  t.is(lines[1][0], 'info')
  t.regex(lines[1][1], /^worker is at 46% memory usage\. Resuming worker\. Process memory: 942\.1 MiB -- Worker memory limit: 2\.00 GiB \(2 more pause\/resume change\(s\) since the last line\)$/)
  log.status('closing', GIB, 10 * STATUS_EVERY_MS)
  t.is(lines.length, 2, 'closing is not a memory state')
})

test('the unmanaged-memory warning at most once per 10 s (Dask rate-limits it the same)', (t) => {
  const lines: string[] = []
  const log = new MemoryLog((_, m) => lines.push(m), GIB)
  log.unmanagedHigh(0.9 * GIB, 0.1 * GIB, 0)
  log.unmanagedHigh(0.9 * GIB, 0.1 * GIB, UNMANAGED_EVERY_MS - 1)
  log.unmanagedHigh(0.9 * GIB, 0.1 * GIB, UNMANAGED_EVERY_MS)
  t.is(lines.length, 2)
  t.regex(lines[0], /Unmanaged memory: 819\.2 MiB -- Worker memory limit: 1\.00 GiB$/)
})
