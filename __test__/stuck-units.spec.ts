import test from 'ava'
import { SpillWarnings, failureCause } from '../src/worker/spill-warnings'
import { StuckDetector, stuckReason, type WorkerState } from '../src/worker/stuck'
import { stuckError, stuckSummary } from '../src/wire/stuck-error'
import type { StuckReport } from '../src/wire/protocol'

const ENOSPC = 'write spill file /spill/worker-0.0/ab-1.tmp failed: No space left on device (os error 28)'

test('spill write failures: one line per cause, then counts at most every interval, then a line when writes land again', (t) => {
  const lines: string[] = []
  const w = new SpillWarnings((m) => lines.push(m), 5000)
  let failures = 0
  // 40 failures a second for 12 s, as a full disk gave before.
  for (let ms = 0; ms < 12_000; ms += 25) w.update(++failures, failures, ENOSPC.replace('ab-1', `ab-${ms}`), ms)
  t.is(lines.length, 3, lines.join('\n'))
  t.regex(lines[0], /^spill write failed \(values stay in memory; writes are retried with backoff\): write spill file .*No space left on device/)
  t.regex(lines[1], /^200 more spill write failures \(No space left on device \(os error 28\)\); 201 so far$/)
  t.regex(lines[2], /^200 more spill write failures .*; 401 so far$/)
  // Another cause gets a line of its own at once.
  w.update(++failures, failures, 'write spill file /x failed: Input/output error (os error 5)', 12_000)
  t.is(lines.length, 4)
  t.regex(lines[3], /Input\/output error/)
  // A write lands: what is pending is summed up, and the return is said once.
  w.update(failures + 3, 0, ENOSPC, 12_100)
  t.regex(lines.at(-2)!, /^82 more spill write failures \(No space left on device.*; 483 so far$/)
  t.is(lines.at(-1), `spill writes succeed again after ${failures + 3} failed`)
  const n = lines.length
  w.update(failures + 3, 0, ENOSPC, 30_000)
  t.is(lines.length, n, 'nothing more while writes work')
  t.is(failureCause(ENOSPC), 'No space left on device (os error 28)')
})

const state = (o: Partial<WorkerState>): WorkerState => ({ paused: true, executing: 0, spillable: 1000, consecutiveWriteFailures: 3, lastWriteNoSpace: true, progress: 'p', ...o })

test('stuck reasons: only a paused worker with nothing running that cannot spill', (t) => {
  t.is(stuckReason(state({})), 'spill-full')
  t.is(stuckReason(state({ lastWriteNoSpace: false })), 'spill-failing')
  t.is(stuckReason(state({ consecutiveWriteFailures: 0, spillable: 0 })), 'nothing-to-spill')
  t.is(stuckReason(state({ consecutiveWriteFailures: 0 })), undefined, 'it can still spill')
  t.is(stuckReason(state({ paused: false })), undefined, 'a running worker takes tasks')
  t.is(stuckReason(state({ executing: 1 })), undefined, 'a running task may still free memory')
})

test('a worker is stuck only after the timeout without progress, and no longer once it moves', (t) => {
  const d = new StuckDetector(1000)
  const describe = (reason: StuckReport['reason'], since: number): StuckReport => ({ reason, since, spillDir: '/s', freeBytes: 0, waitingBytes: 5, rss: 9, memoryLimit: 10 })
  t.false(d.update(state({}), describe, 0))
  t.false(d.update(state({}), describe, 999))
  t.true(d.update(state({}), describe, 1000))
  t.like(d.report, { reason: 'spill-full', since: 0 })
  t.false(d.update(state({}), describe, 5000), 'reported once')
  // Progress (a spill landed, a task finished, a value freed) ends it, and the clock starts again.
  t.true(d.update(state({ progress: 'q' }), describe, 5001))
  t.is(d.report, undefined)
  t.false(d.update(state({ progress: 'q' }), describe, 5500))
  t.true(d.update(state({ progress: 'q' }), describe, 6001))
  // Unpaused, it is not stuck, and pausing again starts a fresh wait.
  t.true(d.update(state({ paused: false, progress: 'q' }), describe, 6002))
  t.false(d.update(state({ progress: 'q' }), describe, 6003))
  t.false(d.update(state({ progress: 'q' }), describe, 7002))
  t.true(d.update(state({ progress: 'q' }), describe, 7003))
})

test('the stuck error names the worker, the spill directory, its free bytes, the bytes waiting and what to do', (t) => {
  const report: StuckReport = { reason: 'spill-full', since: 0, spillDir: '/jobfs/spill/worker-1.0', freeBytes: 3 * 2 ** 20, waitingBytes: 412 * 2 ** 20, rss: 950 * 2 ** 20, memoryLimit: 1024 * 2 ** 20, lastWriteError: 'write spill file x failed: No space left on device (os error 28)' }
  const e = stuckError([{ worker: 'worker-1.0', report }], 'random-3')
  t.is(e.code, 'ERR_SPILLWAY_SPILL_FULL')
  t.is(e.name, 'WorkerStuckError')
  for (const s of ['task "random-3" cannot run', 'worker-1.0', '/jobfs/spill/worker-1.0', '3.0 MiB free', '412.0 MiB of values wait to be written', 'No space left on device', 'tempBaseDir', 'jobfs', 'spillCompression', 'smaller chunks', 'already hold is kept']) {
    t.true(e.message.includes(s), `${s} in: ${e.message}`)
  }
  t.like((e.details.workers as any[])[0], { worker: 'worker-1.0', spillDir: '/jobfs/spill/worker-1.0', freeBytes: 3 * 2 ** 20, waitingBytes: 412 * 2 ** 20 })
  const other = stuckError([{ worker: 'w', report: { ...report, reason: 'nothing-to-spill', lastWriteError: undefined } }])
  t.is(other.code, 'ERR_SPILLWAY_WORKER_STUCK')
  t.regex(other.message, /no managed value left in memory to spill/)
  t.regex(stuckSummary(report, 31_000), /no progress for 31 s$/)
})
