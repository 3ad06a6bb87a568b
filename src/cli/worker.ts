// `spillway worker`: workers on this node for a scheduler elsewhere, sized
// from this node's own memory, cores, cgroups and batch variables, spilling
// under this node's $PBS_JOBFS / $TMPDIR / --temp-base-dir. Runs until the
// cluster closes, its scheduler has been gone for --death-timeout seconds,
// or it is stopped (SIGINT / SIGTERM).

import { SetupConfig } from '../config/config'
import { ConfigError } from '../base/errors'
import { runNodeWorkers } from '../deploy/remote/node-workers'
import { describeFlags, parseCommand, SETUP_FLAGS, type FlagSpec } from './args'

const WORKER_FLAGS: FlagSpec = {
  schedulerFile: 'string',
  scheduler: 'string',
  secretFile: 'string',
  host: 'string',
  interface: 'string',
  deathTimeout: 'number',
  nworkers: 'number',
  tlsCa: 'string',
  lifetime: 'number',
  lifetimeStagger: 'number',
  ...SETUP_FLAGS,
}

function help(): string {
  return [
    'Usage: spillway worker --scheduler-file FILE [options]',
    '       spillway worker --scheduler tcp://HOST:PORT --secret-file FILE [options]',
    '',
    'Starts workers on this node that join a scheduler elsewhere (setupClient({ schedulerFile }) or rank 0 of',
    'an allocation). Sized like setupClient on this node (--max-workers, --max-mem-gb, --reserve-mem-gb, ...).',
    '',
    'Options:',
    '  --scheduler-file <string>  the scheduler file to wait for (its secret is FILE.secret)',
    '  --scheduler <string>       the scheduler address, with --secret-file',
    '  --host <string>            address the workers’ data servers listen on (default: this node’s name, or',
    '                             127.0.0.1 when the scheduler is on loopback)',
    '  --interface <string>       listen on this network interface’s address instead (e.g. ib0)',
    '  --death-timeout <number>   seconds without a scheduler before the workers exit (default 60)',
    '  --nworkers <number>        exactly this many worker processes, sharing the usable memory (default: as sized)',
    '  --tls-ca <string>          for a tls:// scheduler: the CA that signed its certificate (with --tls-cert and',
    '                             --tls-key when the scheduler asks workers for a certificate too)',
    '  --lifetime <number>        seconds after which the workers retire (set it below the job\'s walltime)',
    '  --lifetime-stagger <number> a further random 0..N seconds per worker, so they do not all leave at once',
    ...describeFlags(SETUP_FLAGS),
  ].join('\n')
}

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommand(argv, WORKER_FLAGS, help)
  if (!flags) return 0
  const { schedulerFile, scheduler, secretFile, host, interface: iface, deathTimeout, nworkers, lifetime, lifetimeStagger, tlsCa, tlsCert, tlsKey, config: file, ...setup } = flags as Record<string, any>
  const problems = []
  if (!schedulerFile && !scheduler) problems.push({ field: 'scheduler-file', value: undefined, allowed: 'a scheduler file, or --scheduler tcp://host:port with --secret-file' })
  if (scheduler && !secretFile && !schedulerFile) problems.push({ field: 'secret-file', value: undefined, allowed: 'the file holding the cluster secret (with --scheduler)' })
  for (const [field, v] of [['death-timeout', deathTimeout], ['lifetime', lifetime], ['lifetime-stagger', lifetimeStagger]] as const) {
    if (v !== undefined && !(v > 0)) problems.push({ field, value: v, allowed: 'a positive number of seconds' })
  }
  if (nworkers !== undefined && !(Number.isInteger(nworkers) && nworkers > 0)) problems.push({ field: 'nworkers', value: nworkers, allowed: 'a positive integer (worker processes on this node)' })
  if (problems.length) throw new ConfigError(problems, 'worker options')
  const config = file !== undefined ? SetupConfig.fromFile(file, setup) : new SetupConfig({ workloadType: 'cpu', ...setup })
  const log = (m: string) => process.stderr.write(`[spillway] ${m}\n`)
  const stop = new AbortController()
  process.once('SIGINT', () => stop.abort())
  process.once('SIGTERM', () => stop.abort())
  const ends = await runNodeWorkers(
    {
      config,
      schedulerFile,
      scheduler,
      secretFile,
      host,
      interface: iface,
      nWorkers: nworkers,
      tls: tlsCa || tlsCert ? { ca: tlsCa, cert: tlsCert, key: tlsKey } : undefined,
      deathTimeoutMs: (deathTimeout ?? 60) * 1000,
      lifetimeMs: lifetime === undefined ? undefined : lifetime * 1000,
      lifetimeStaggerMs: (lifetimeStagger ?? 0) * 1000,
      log,
    },
    stop.signal,
  )
  const failed = ends.find((e) => e.reason === 'refused' || e.reason === 'failed' || e.reason === 'unreachable')
  log(`workers stopped: ${failed?.message ?? ends[0]?.message ?? 'no workers'}`)
  return failed ? 1 : 0
}
