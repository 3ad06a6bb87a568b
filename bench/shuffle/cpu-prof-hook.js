// Preloaded into spillway's worker processes by bench/shuffle's profiling run
// (NODE_OPTIONS=--require …, since Node 20 refuses --cpu-prof there): the
// V8 CPU profiler from the first line to exit, written to
// $SPILLWAY_BENCH_PROFILE_DIR/worker.PID.cpuprofile. Processes without an
// IPC channel (the benchmark's own) are left alone.
'use strict'
const dir = process.env.SPILLWAY_BENCH_PROFILE_DIR
if (dir && typeof process.send === 'function') {
  const inspector = require('node:inspector')
  const fs = require('node:fs')
  const path = require('node:path')
  const session = new inspector.Session()
  session.connect()
  session.post('Profiler.enable')
  session.post('Profiler.setSamplingInterval', { interval: 1000 })
  session.post('Profiler.start')
  let written = false
  const write = () => {
    if (written) return
    written = true
    session.post('Profiler.stop', (err, r) => {
      if (!err) fs.writeFileSync(path.join(dir, `worker.${process.pid}.cpuprofile`), JSON.stringify(r.profile))
    })
  }
  process.on('exit', write)
  process.on('disconnect', write)
}
