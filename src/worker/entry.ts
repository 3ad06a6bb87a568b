// The worker process's entry point: a Worker on the IPC channel to its
// nanny, or (started by `spillway worker`) on a TCP connection to a
// scheduler elsewhere, its nanny still watching from this node.

import type { SchedulerToWorker, WorkerToScheduler } from '../wire/protocol'
import { EXIT_REFUSED, EXIT_UNREACHABLE, JOIN_ENV, joinScheduler, watchScheduler, type JoinSpec } from '../comm/join'
import { readSecretFile } from '../comm/scheduler-file'
import { ParentTransport } from '../comm/transport'
import { Worker } from './worker'

const join = process.env[JOIN_ENV]
if (!join) new Worker(new ParentTransport<SchedulerToWorker, WorkerToScheduler>())
else {
  const spec = JSON.parse(join) as JoinSpec
  joinScheduler(spec.scheduler, readSecretFile(spec.secretFile), spec.hello, 30_000, spec.tls).then(
    ({ transport, ttlMs }) => {
      new Worker(transport)
      watchScheduler(transport, ttlMs)
    },
    (e) => {
      console.error(`[spillway] ${spec.hello.name}: ${e.message}`)
      process.exit(e.code === 'ERR_SPILLWAY_NO_SCHEDULER' ? EXIT_UNREACHABLE : EXIT_REFUSED)
    },
  )
}
