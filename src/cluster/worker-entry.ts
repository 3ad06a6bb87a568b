// The worker process's entry point: a Worker on the IPC channel to its nanny.

import type { SchedulerToWorker, WorkerToScheduler } from './protocol'
import { ParentTransport } from './transport'
import { Worker } from './worker/worker'

new Worker(new ParentTransport<SchedulerToWorker, WorkerToScheduler>())
