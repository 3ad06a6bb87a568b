// `spillway worker`: workers on this node for a scheduler elsewhere, sized
// from this node's own memory, cores, cgroups and batch variables, spilling
// under this node's $PBS_JOBFS / $TMPDIR / --temp-base-dir. Runs until the
// cluster closes, its scheduler has been gone for --death-timeout seconds,
// or it is stopped (SIGINT / SIGTERM).

import { hostname } from 'node:os'
import { SetupConfig } from '../config'
import { ConfigError } from '../errors'
import { addressOfInterface } from '../cluster/comm/interface'
import { parseAddress } from '../cluster/comm/address'
import { RemoteNanny } from '../cluster/remote/remote-nanny'
import { readSchedulerFile, secretFileOf } from '../cluster/remote/scheduler-file'
import { detectResources } from '../resources'
import { computeMemorySpec } from '../sizing'
import { createSpillDir } from '../tempdir'
import { describeFlags, parseCommand, SETUP_FLAGS, type FlagSpec } from './args'

const WORKER_FLAGS: FlagSpec = {
  schedulerFile: 'string',
  scheduler: 'string',
  secretFile: 'string',
  host: 'string',
  interface: 'string',
  deathTimeout: 'number',
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
    ...describeFlags(SETUP_FLAGS),
  ].join('\n')
}

const LOOPBACK = /^(127\.|::1$|localhost$)/

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommand(argv, WORKER_FLAGS, help)
  if (!flags) return 0
  const { schedulerFile, scheduler, secretFile, host, interface: iface, deathTimeout, config: file, ...setup } = flags as Record<string, any>
  const problems = []
  if (!schedulerFile && !scheduler) problems.push({ field: 'scheduler-file', value: undefined, allowed: 'a scheduler file, or --scheduler tcp://host:port with --secret-file' })
  if (scheduler && !secretFile && !schedulerFile) problems.push({ field: 'secret-file', value: undefined, allowed: 'the file holding the cluster secret (with --scheduler)' })
  if (deathTimeout !== undefined && !(deathTimeout > 0)) problems.push({ field: 'death-timeout', value: deathTimeout, allowed: 'a positive number of seconds' })
  if (problems.length) throw new ConfigError(problems, 'spillway worker options')
  const config = file !== undefined ? SetupConfig.fromFile(file, setup) : new SetupConfig({ workloadType: 'cpu', ...setup })
  const deathTimeoutMs = (deathTimeout ?? 60) * 1000
  const address: string = scheduler ?? (await readSchedulerFile(schedulerFile, deathTimeoutMs)).address
  parseAddress(address)
  const resources = await detectResources()
  const spec = computeMemorySpec(config, resources)
  const spill = await createSpillDir(config, { expectedSpillBytes: spec.usableBytes })
  const schedulerHost = address.startsWith('tcp://') ? parseAddress(address) : undefined
  const dataHost = iface ? addressOfInterface(iface) : host ?? (schedulerHost && schedulerHost.kind === 'tcp' && LOOPBACK.test(schedulerHost.host) ? '127.0.0.1' : hostname())
  const log = (m: string) => process.stderr.write(`[spillway] ${m}\n`)
  const nannies = Array.from(
    { length: spec.nWorkers },
    (_, slot) =>
      new RemoteNanny({
        slot,
        host: hostname(),
        nthreads: spec.threadsPerWorker,
        memoryLimit: spec.perWorkerBytes,
        spillDir: spill.path,
        dataHost,
        scheduler: address,
        secretFile: secretFile ?? secretFileOf(schedulerFile),
        schedulerFile,
        terminate: config.memoryTerminate,
        deathTimeoutMs,
        log,
      }),
  )
  for (const n of nannies) n.start()
  log(`${nannies.length} worker(s) of ${(spec.perWorkerBytes / 2 ** 30).toFixed(2)} GiB, ${spec.threadsPerWorker} thread(s) each, joining ${address}; spilling under ${spill.path}`)
  const stop = () => nannies.forEach((n) => void n.stop())
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  const ends = await Promise.all(nannies.map((n) => n.done))
  await spill.remove()
  const refused = ends.find((e) => e.reason === 'refused' || e.reason === 'unreachable')
  log(`workers stopped: ${refused?.message ?? ends[0]?.message ?? 'no workers'}`)
  return refused ? 1 : 0
}
