// Where this process stands in a batch allocation where every rank runs the
// same script (`srun`, `mpiexec`, `pbsdsh`), read from the launcher's own
// variables: rank 0 becomes the scheduler and the client, every other rank
// a worker. MPI launchers' variables come first: under `mpiexec` inside a
// SLURM job, SLURM_PROCID describes the job step, not the rank.

import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'

export type Launcher = 'openmpi' | 'pmi' | 'pmix' | 'slurm' | 'pbs'

export interface Rank {
  rank: number
  /** Ranks in all, when the launcher says. */
  size?: number
  /** Ranks on this node (this one included), when known: the node's memory and cores are shared among them. */
  localSize?: number
  launcher: Launcher
  /** The batch job, which keys the scheduler file. */
  jobId?: string
}

const int = (v: string | undefined): number | undefined => (v !== undefined && /^\d+$/.test(v.trim()) ? Number(v) : undefined)

/** SLURM_TASKS_PER_NODE ("2(x3),1"): the count on the node this task runs on, SLURM_NODEID. */
function slurmTasksOnNode(env: NodeJS.ProcessEnv): number | undefined {
  const spec = env.SLURM_TASKS_PER_NODE
  const node = int(env.SLURM_NODEID) ?? 0
  if (!spec) return int(env.SLURM_NTASKS_PER_NODE)
  let i = 0
  for (const part of spec.split(',')) {
    const m = /^(\d+)(?:\(x(\d+)\))?$/.exec(part.trim())
    if (!m) return undefined
    i += Number(m[2] ?? 1)
    if (node < i) return Number(m[1])
  }
  return undefined
}

/** Lines of PBS_NODEFILE naming this host: PBS lists a node once per slot. */
function pbsSlotsHere(env: NodeJS.ProcessEnv, host: string): { size?: number; here?: number } {
  if (!env.PBS_NODEFILE) return {}
  let lines: string[]
  try {
    lines = readFileSync(env.PBS_NODEFILE, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean)
  } catch {
    return {}
  }
  const short = (h: string) => h.split('.')[0]
  return { size: lines.length, here: lines.filter((l) => short(l) === short(host)).length || undefined }
}

export function detectRank(env: NodeJS.ProcessEnv = process.env, host = hostname()): Rank | undefined {
  const jobId = env.SLURM_JOB_ID ?? env.PBS_JOBID ?? env.LSB_JOBID
  const withJob = (r: Rank): Rank => (jobId ? { ...r, jobId } : r)
  const ompi = int(env.OMPI_COMM_WORLD_RANK)
  if (ompi !== undefined) return withJob({ rank: ompi, size: int(env.OMPI_COMM_WORLD_SIZE), localSize: int(env.OMPI_COMM_WORLD_LOCAL_SIZE), launcher: 'openmpi' })
  const pmi = int(env.PMI_RANK)
  if (pmi !== undefined) return withJob({ rank: pmi, size: int(env.PMI_SIZE), localSize: int(env.MPI_LOCALNRANKS), launcher: 'pmi' })
  const pmix = int(env.PMIX_RANK)
  if (pmix !== undefined) return withJob({ rank: pmix, size: int(env.PMIX_SIZE) ?? int(env.SLURM_NTASKS), localSize: int(env.PMIX_LOCAL_SIZE) ?? slurmTasksOnNode(env), launcher: 'pmix' })
  const slurm = int(env.SLURM_PROCID)
  if (slurm !== undefined) return withJob({ rank: slurm, size: int(env.SLURM_NTASKS), localSize: slurmTasksOnNode(env), launcher: 'slurm' })
  // pbsdsh numbers its tasks from PBS_VNODENUM 0 (PBS_TASKNUM counts from 1).
  const vnode = int(env.PBS_VNODENUM)
  const task = int(env.PBS_TASKNUM)
  if (vnode !== undefined || task !== undefined) {
    const { size, here } = pbsSlotsHere(env, host)
    return withJob({ rank: vnode ?? task! - 1, size, localSize: here, launcher: 'pbs' })
  }
  return undefined
}

/** The scheduler file of an allocation: in the shared working directory, keyed by the job. */
export function allocationSchedulerFile(rank: Rank, cwd = process.cwd()): string {
  return join(cwd, `spillway-scheduler-${(rank.jobId ?? 'interactive').replace(/[^A-Za-z0-9._-]/g, '_')}.json`)
}
