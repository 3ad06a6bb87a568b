// The worker process's entry point: a Worker on the IPC channel to its
// nanny, or (started by `spillway worker`) on a TCP connection to a
// scheduler elsewhere, its nanny still watching from this node.

import type { SchedulerToWorker, WorkerToScheduler } from '../wire/protocol'
import { EXIT_CONFIG, EXIT_REFUSED, EXIT_UNREACHABLE, JOIN_ENV, joinScheduler, watchScheduler, type JoinSpec } from '../comm/join'
import { readSecretFile } from '../comm/scheduler-file'
import { ParentTransport } from '../comm/transport'
import { Worker } from './worker'

/** One line for the nanny's log, no stack: the nanny decides from the code whether to try again. */
function fail(name: string, e: any, code: number): never {
  console.error(`[spillway] ${name}: ${e?.message ?? e}`)
  process.exit(code)
}

const join = process.env[JOIN_ENV]
if (!join) new Worker(new ParentTransport<SchedulerToWorker, WorkerToScheduler>())
else {
  let spec: JoinSpec
  let secret: Buffer
  try {
    spec = JSON.parse(join) as JoinSpec
  } catch (e) {
    fail('worker', e, EXIT_CONFIG)
  }
  try {
    secret = readSecretFile(spec.secretFile)
  } catch (e) {
    fail(spec.hello?.name ?? 'worker', e, EXIT_CONFIG)
  }
  joinScheduler(spec.scheduler, secret, spec.hello, 30_000, spec.tls).then(
    ({ transport, ttlMs }) => {
      new Worker(transport)
      watchScheduler(transport, ttlMs)
    },
    (e) => fail(spec.hello.name, e, e.code === 'ERR_SPILLWAY_NO_SCHEDULER' ? EXIT_UNREACHABLE : EXIT_REFUSED),
  )
}
