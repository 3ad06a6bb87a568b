// Loaded by ava into every test file's process (the lanes' `require`): when
// SPILLWAY_TEST_TIMINGS names a file, the spec's whole wall time (hooks,
// clusters started and closed, every test) is appended to it as
// `seconds<TAB>lane<TAB>spec`, which .ci/run sorts for the slowest specs.
// ava's own output times tests, not files, and leaves out the hooks.
const { appendFileSync } = require('node:fs')
const { basename } = require('node:path')

const start = performance.now()
const out = process.env.SPILLWAY_TEST_TIMINGS

if (out) {
  process.on('exit', () => {
    const spec = Object.keys(require.cache).find((f) => /[\\/]__test__[\\/][^\\/]+\.spec\.ts$/.test(f))
    if (spec === undefined) return
    const seconds = ((performance.now() - start) / 1000).toFixed(1)
    appendFileSync(out, `${seconds}\t${process.env.SPILLWAY_TEST_LANE ?? 'all'}\t${basename(spec)}\n`)
  })
}

module.exports = () => {}
