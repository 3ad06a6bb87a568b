// The spillway sides' cluster: `nWorkers` processes of 1 thread and `mem`
// bytes each, with the 'cpu' profile's thresholds (as setupClient gives
// them) and a spill directory of their own, removed on close; and the
// resident memory of a process, as the sides sample it.
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { LocalCluster, Client } = require('..')

/** VmRSS of `pid` in bytes; 0 when it cannot be read (the process is gone). */
function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : 0
  } catch {
    return 0
  }
}

async function startBenchCluster(label, nWorkers, mem) {
  const spillDir = fs.mkdtempSync(path.join(os.tmpdir(), `spillway-bench-${label}-spill-`))
  const cluster = await LocalCluster.start({
    nWorkers,
    threadsPerWorker: 1,
    memoryLimit: mem,
    thresholds: { target: 0.6, spill: 0.7, pause: 0.85, terminate: 0.95 },
    spillDir,
    codec: 'auto',
    cleanup: () => fs.rmSync(spillDir, { recursive: true, force: true }),
  })
  const client = new Client(cluster, { ownsCluster: true, silenceLogs: true })
  return { cluster, client, pids: cluster.nannies.map((n) => n.pid) }
}

module.exports = { rssOf, startBenchCluster }
