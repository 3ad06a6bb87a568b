// SlurmCluster: workers as SLURM jobs (sbatch / scancel), as
// dask-jobqueue's SLURMCluster.

import { JobQueueCluster } from './job-queue-cluster'
import { formatWalltime, nameProblem, type JobQueueOptions } from './options'

export interface SlurmOptions extends JobQueueOptions {
  /** The account to charge (-A). */
  account?: string
}

export class SlurmCluster extends JobQueueCluster {
  constructor(options: SlurmOptions) {
    const account = options?.account
    super(
      {
        name: 'SlurmCluster',
        prefix: '#SBATCH',
        directives: (o, logs) => [
          `-J ${o.jobName}`,
          `-e ${logs}/${o.jobName}-%J.err`,
          `-o ${logs}/${o.jobName}-%J.out`,
          ...(o.queue ? [`-p ${o.queue}`] : []),
          ...(account ? [`-A ${account}`] : []),
          '-n 1',
          `--cpus-per-task=${o.cores}`,
          `--mem=${Math.ceil(o.memoryBytes / 2 ** 20)}M`,
          `-t ${formatWalltime(o.walltimeSeconds)}`,
        ],
        submit: { command: 'sbatch', args: (script) => ['--parsable', script] },
        cancel: { command: 'scancel', args: (ids) => ids },
        // --parsable prints "id" or "id;cluster".
        parseJobId: (out) => /^\s*(\d+)/.exec(out)?.[1],
      },
      options,
      ['account'],
      nameProblem(options as unknown as Record<string, unknown>, 'account', 'a SLURM account'),
    )
  }
}
