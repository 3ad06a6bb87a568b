// The ranks of an allocation other than rank 0: each becomes this node's
// workers for the scheduler rank 0 runs, and exits when the cluster closes
// (rank 0 removes the scheduler file), when the scheduler is gone for the
// death timeout, or on SIGTERM (the job ending).

import { SetupConfig } from '../../config/config'
import { ConfigError } from '../../base/errors'
import { nodeAddress } from '../../comm/interface'
import { allocationSchedulerFile, detectRank, type Rank } from './allocation'
import { runNodeWorkers } from './node-workers'

/**
 * setupClient({ cluster: 'allocation' }): on rank 0, the configuration of a
 * scheduler for the other ranks (no local workers unless asked, listening
 * where they can reach it, the job's scheduler file); on any other rank,
 * this node's workers, and the process ends with the cluster.
 */
export async function allocationConfig(config: SetupConfig, env: NodeJS.ProcessEnv = process.env, log: (m: string) => void = (m) => process.stderr.write(`[spillway] ${m}\n`)): Promise<SetupConfig> {
  const rank = detectRank(env)
  if (!rank) {
    throw new ConfigError(
      [{ field: 'cluster', value: 'allocation', allowed: "a script run by a launcher that numbers its ranks (srun: SLURM_PROCID; mpiexec: OMPI_COMM_WORLD_RANK, PMI_RANK; pbsdsh: PBS_VNODENUM); 'local' elsewhere" }],
      'setupClient options',
    )
  }
  const schedulerFile = config.schedulerFile ?? allocationSchedulerFile(rank)
  const base = { ...config.toJSON(), cluster: 'local' as const, schedulerFile }
  if (rank.rank !== 0) return becomeWorkers(new SetupConfig(base), rank, schedulerFile, log)
  // Other nodes cannot reach loopback: listen on this node's address unless every rank is here.
  const oneNode = rank.size !== undefined && rank.localSize !== undefined && rank.size <= rank.localSize
  const schedulerAddress = config.schedulerAddress ?? (config.schedulerInterface ? undefined : `tcp://${oneNode ? '127.0.0.1' : nodeAddress()}:0`)
  return new SetupConfig({ ...base, localWorkers: config.localWorkers ?? 0, schedulerAddress })
}

/** Runs this rank's workers, then ends the process: it never returns. */
export async function becomeWorkers(config: SetupConfig, rank: Rank, schedulerFile: string, log: (m: string) => void): Promise<never> {
  const stop = new AbortController()
  process.once('SIGTERM', () => stop.abort())
  process.once('SIGINT', () => stop.abort())
  let code = 0
  try {
    const ends = await runNodeWorkers(
      {
        config,
        schedulerFile,
        interface: config.schedulerInterface,
        tls: config.tlsCa || config.tlsCert ? { ca: config.tlsCa, cert: config.tlsCert, key: config.tlsKey } : undefined,
        deathTimeoutMs: 60_000,
        share: Math.max(1, rank.localSize ?? 1),
        log: (m) => log(`rank ${rank.rank}: ${m}`),
      },
      stop.signal,
    )
    const failed = ends.find((e) => e.reason === 'refused' || e.reason === 'failed' || e.reason === 'unreachable')
    if (failed) {
      log(`rank ${rank.rank}: ${failed.message}`)
      code = 1
    }
  } catch (e: any) {
    log(`rank ${rank.rank}: ${e.message}`)
    code = 1
  }
  process.exit(code)
}
