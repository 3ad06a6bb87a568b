// Preloaded into every process of a profiled run (NODE_OPTIONS=--require,
// since Node refuses --cpu-prof there): starts V8's sampling profiler and
// writes <SPILLWAY_BAG_PROF_DIR>/<pid>.cpuprofile when the process exits.
'use strict'
const inspector = require('node:inspector')
const fs = require('node:fs')
const path = require('node:path')

const dir = process.env.SPILLWAY_BAG_PROF_DIR
const session = new inspector.Session()
session.connect()
session.post('Profiler.enable')
session.post('Profiler.setSamplingInterval', { interval: 500 })
session.post('Profiler.start')
let written = false
function write() {
  if (written) return
  written = true
  session.post('Profiler.stop', (err, r) => {
    if (!err) fs.writeFileSync(path.join(dir, `${process.argv[1] ? path.basename(process.argv[1]) : 'node'}-${process.pid}.cpuprofile`), JSON.stringify(r.profile))
  })
}
process.on('exit', write)
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.prependListener(sig, () => {
    write()
    if (process.listenerCount(sig) === 1) process.exit(128 + (sig === 'SIGTERM' ? 15 : 2))
  })
}
