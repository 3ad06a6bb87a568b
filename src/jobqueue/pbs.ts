// PbsCluster: workers as PBS Pro / Torque jobs (qsub / qdel), in the form
// NCI's Gadi takes: resources as -l ncpus= / mem= / jobfs= (Gadi refuses
// `select`; ask for it with `select: true` elsewhere), the project as -P,
// and the filesystems a job may see as -l storage=.

import { memorySizeProblem } from '../base/units'
import { JobQueueCluster } from './job-queue-cluster'
import { formatWalltime, nameProblem, parseMemory, type JobQueueOptions } from './options'

export interface PbsOptions extends JobQueueOptions {
  /** The project to charge (-P, as Gadi wants). */
  project?: string
  /** An account (-A), for PBS sites that use one instead. */
  account?: string
  /** Node-local disk per job (-l jobfs=), e.g. '100 GiB'; the workers spill there ($PBS_JOBFS). */
  jobfs?: number | string
  /** Filesystems the job needs (-l storage=), e.g. 'gdata/ab12+scratch/ab12'. */
  storage?: string
  /** Ask for resources as -l select=1:ncpus=…:mem=… (PBS Pro's chunk form); default false. */
  select?: boolean
}

const gb = (bytes: number) => `${Math.ceil(bytes / 2 ** 30)}GB`

export class PbsCluster extends JobQueueCluster {
  constructor(options: PbsOptions) {
    const o = (options ?? {}) as PbsOptions
    const jobfs = o.jobfs === undefined ? undefined : parseMemory(o.jobfs)
    const problems = [...nameProblem(o as unknown as Record<string, unknown>, 'project', 'a PBS project'), ...nameProblem(o as unknown as Record<string, unknown>, 'account', 'a PBS account')]
    if (o.jobfs !== undefined && jobfs === undefined) problems.push({ field: 'jobfs', value: o.jobfs, allowed: `node-local disk per job: ${memorySizeProblem(o.jobfs)}` })
    if (o.storage !== undefined && !(typeof o.storage === 'string' && /^[\w./+-]+$/.test(o.storage))) problems.push({ field: 'storage', value: o.storage, allowed: "filesystems joined by '+', e.g. 'gdata/ab12+scratch/ab12'" })
    if (o.select !== undefined && typeof o.select !== 'boolean') problems.push({ field: 'select', value: o.select, allowed: 'true or false' })
    super(
      {
        name: 'PbsCluster',
        prefix: '#PBS',
        directives: (r, logs) => [
          `-N ${r.jobName}`,
          ...(r.queue ? [`-q ${r.queue}`] : []),
          ...(o.project ? [`-P ${o.project}`] : []),
          ...(o.account ? [`-A ${o.account}`] : []),
          ...(o.select ? [`-l select=1:ncpus=${r.cores}:mem=${gb(r.memoryBytes)}`] : [`-l ncpus=${r.cores}`, `-l mem=${gb(r.memoryBytes)}`]),
          ...(jobfs ? [`-l jobfs=${gb(jobfs)}`] : []),
          ...(o.storage ? [`-l storage=${o.storage}`] : []),
          `-l walltime=${formatWalltime(r.walltimeSeconds)}`,
          `-o ${logs}`,
          `-e ${logs}`,
        ],
        submit: { command: 'qsub', args: (script) => [script] },
        cancel: { command: 'qdel', args: (ids) => ids },
        // "123.gadi-pbs", or "123" on some sites.
        parseJobId: (out) => /^\s*(\d+(?:\.[\w.-]+)?)\s*$/m.exec(out)?.[1],
      },
      o,
      ['project', 'account', 'jobfs', 'storage', 'select'],
      problems,
    )
  }
}
