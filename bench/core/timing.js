// bench/core's timing: medians of repeated calls, and alternating rounds in
// which every contestant is called once, the first one moving each round.
'use strict'

const QUICK = process.argv.includes('--quick')
const MB = 1e6
// Alternating rounds per comparison (at least 5: a ratio is read off medians).
const ROUNDS = QUICK ? 5 : 15

/** Median seconds of `fn` (sync or async) after a warm-up, repeating until
 *  `minReps` runs and about `budget` seconds, at most `maxReps` runs. */
async function median(fn, { warmup = 1, minReps = QUICK ? 2 : 5, maxReps = QUICK ? 3 : 9, budget = QUICK ? 0.5 : 2 } = {}) {
  for (let i = 0; i < warmup; i++) await fn()
  const times = []
  const start = process.hrtime.bigint()
  while (times.length < maxReps) {
    const t = process.hrtime.bigint()
    await fn()
    times.push(Number(process.hrtime.bigint() - t) / 1e9)
    const spent = Number(process.hrtime.bigint() - start) / 1e9
    if (times.length >= minReps && spent > budget) break
  }
  return spreadOf(times).median
}

/** min / median / max of some figures (non-numbers left out; undefined when none is left). */
function spreadOf(xs) {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b)
  if (!s.length) return undefined
  return { min: s[0], median: s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2, max: s[s.length - 1] }
}

/** Alternating repetitions: each round calls every contestant once, the
 *  first one moving round by round, so a slow spell of the machine falls on
 *  all of them. Returns each contestant's seconds as min / median / max. */
async function alternate(fns, { warmup = 1, rounds = ROUNDS } = {}) {
  for (let i = 0; i < warmup; i++) for (const fn of fns) await fn()
  const times = fns.map(() => [])
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < fns.length; k++) {
      const i = (r + k) % fns.length
      const t = process.hrtime.bigint()
      await fns[i]()
      times[i].push(Number(process.hrtime.bigint() - t) / 1e9)
    }
  }
  return times.map(spreadOf)
}

/** MB/s for `bytes` at each of a spread of seconds (min time = max rate). */
const rateOf = (bytes, s) => ({ min: bytes / MB / s.max, median: bytes / MB / s.median, max: bytes / MB / s.min })

module.exports = { MB, QUICK, alternate, median, rateOf, spreadOf }
