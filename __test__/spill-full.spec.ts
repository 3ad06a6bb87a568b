// The spill disk fills up: a small tmpfs as tempBaseDir, real workers, real
// ENOSPC. A user's script (fixtures/spill-full.cjs) runs the pipeline; the
// test reads what it printed and what the workers logged.
import test, { type ExecutionContext } from 'ava'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const SCRIPT = join(__dirname, 'fixtures', 'spill-full.cjs')

/** A tmpfs of `mb` MB, unmounted at the end; undefined (the test passes with a note) where mounting is not allowed. */
function tmpfs(t: ExecutionContext, mb: number): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-tmpfs-'))
  const r = process.platform === 'linux' ? spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m,mode=0700`, 'tmpfs', dir], { encoding: 'utf8' }) : undefined
  if (!r || r.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    t.log(`skipped: cannot mount a tmpfs here (${r ? r.stderr.trim() || `mount exited ${r.status}` : process.platform}); these tests need Linux and root`)
    return undefined
  }
  t.teardown(() => {
    spawnSync('umount', [dir])
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

function run(t: ExecutionContext, args: string[]) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', timeout: 150_000 })
  t.is(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!)
  const warnings = r.stderr.split('\n').filter((l) => l.startsWith('[spillway] warn: '))
  const perWorker = (pattern: RegExp) => {
    const counts: Record<string, number> = {}
    for (const l of warnings) if (pattern.test(l)) counts[l.split(': ')[1]] = (counts[l.split(': ')[1]] ?? 0) + 1
    return counts
  }
  return { out, warnings, perWorker }
}

test('a persist that cannot spill fails with ERR_SPILLWAY_SPILL_FULL within the stuck timeout; what was held is kept; releasing it lets work go on', (t) => {
  t.timeout(4 * 60_000)
  const dir = tmpfs(t, 64)
  if (!dir) return t.pass()
  const { out, perWorker } = run(t, [dir, 'stuck'])
  // The hang becomes a coded error a little after the 3 s stuckTimeout.
  t.is(out.error?.code, 'ERR_SPILLWAY_SPILL_FULL', JSON.stringify(out))
  t.is(out.error.name, 'WorkerStuckError')
  t.true(out.seconds < 30, `failed after ${out.seconds} s`)
  for (const s of ['stuck', 'spill disk is full', dir, 'MiB free', 'wait to be written', 'No space left on device', 'tempBaseDir', 'spillCompression']) {
    t.true(out.error.message.includes(s), `${s} in: ${out.error.message}`)
  }
  t.is(out.error.workers.length, 2)
  for (const w of out.error.workers) {
    t.like(w, { reason: 'spill-full' })
    t.true(w.spillDir.startsWith(dir))
    t.true(w.freeBytes < 8 * 2 ** 20 && w.waitingBytes > 0, JSON.stringify(w))
  }
  // schedulerWorkers shows the state; every failure is counted.
  t.true(out.workers.every((w: any) => w.status === 'paused' && w.stuck?.reason === 'spill-full' && w.writeFailures >= 1), JSON.stringify(out.workers))
  // So do the dashboard's view and its Prometheus metrics.
  t.deepEqual(out.dashboard.stuck, ['spill-full', 'spill-full'])
  t.is(out.dashboard.metrics.length, 2)
  for (const l of out.dashboard.metrics) t.regex(l, /^spillway_worker_stuck\{worker="[^"]+",reason="spill-full"\} 1$/)
  // New work fails at once while the workers stay stuck, rather than hang.
  t.is(out.laterError.code, 'ERR_SPILLWAY_SPILL_FULL')
  // The first array is intact, before and after the stuck array is released.
  t.is(out.meanAfter, out.meanBefore)
  t.is(out.meanAfterRelease, out.meanBefore)
  t.true(Math.abs(out.zMean - 0.5) < 0.01, 'a persist that fits succeeds after the release')
  // A readable log: a handful of spill-write lines per worker, not one per failure.
  const lines = perWorker(/spill write/)
  t.is(Object.keys(lines).length, 2, JSON.stringify(lines))
  for (const n of Object.values(lines)) t.true(n <= 4, JSON.stringify(lines))
  t.deepEqual(Object.values(perWorker(/: stuck: /)), [1, 1])
})

test('space freed while a persist is held up by a full disk: spilling resumes and the persist finishes, no restart', (t) => {
  t.timeout(4 * 60_000)
  const dir = tmpfs(t, 400)
  if (!dir) return t.pass()
  // Another process's file leaves ~6 MB of the 400.
  mkdirSync(join(dir, 'other'))
  const ballast = join(dir, 'other', 'ballast')
  writeFileSync(ballast, Buffer.alloc(394e6))
  const { out, perWorker } = run(t, [dir, 'free', ballast])
  t.true(out.workers.every((w: any) => w.status === 'running' && !w.stuck && w.writeFailures >= 1 && w.spillCount > 0), JSON.stringify(out.workers))
  t.true(Math.abs(out.yMean - 0.5) < 0.01)
  t.is(out.meanAfter, out.meanBefore)
  t.deepEqual(perWorker(/: stuck: /), {})
  for (const n of Object.values(perWorker(/spill writes succeed again after \d+ failed/))) t.is(n, 1)
  t.log(`held up after ${out.blockedAfter} s; finished ${out.finishedAfterFree} s after the space was freed`)
})

test('a user task whose result fits neither in memory nor on the spill disk fails with ERR_SPILLWAY_SPILL_FULL; the worker is not killed', (t) => {
  t.timeout(4 * 60_000)
  const dir = tmpfs(t, 64)
  if (!dir) return t.pass()
  const { out } = run(t, [dir, 'task'])
  t.is(out.error?.code, 'ERR_SPILLWAY_SPILL_FULL', JSON.stringify(out))
  t.regex(out.error.message, /its result of 333\.8 MiB cannot be stored/)
  t.regex(out.error.message, /terminate threshold/)
  t.is(out.error.details.bytes, 350e6)
  t.true(out.sameWorkers, 'no worker was killed or restarted')
  t.is(out.small, 42)
  t.is(out.meanAfter, out.meanBefore)
})
