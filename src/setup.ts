// setupClient(): config → resources → sizing → spill dir → scheduler and
// workers → client, as dask_setup's setup_dask_client.

import { Client } from './client/client'
import { formatAddress, parseAddress } from './comm/address'
import { addressOfInterface } from './comm/interface'
import { LocalCluster } from './deploy/local-cluster'
import { allocationConfig } from './deploy/remote/allocation-runner'
import { SetupConfig, type SetupOptions } from './config/config'
import { startDashboardFor } from './dashboard/setup-dashboard'
import { ConfigError } from './base/errors'
import { detectResources, type Resources } from './config/resources'
import { computeMemorySpec, formatSummary, type MemorySpec } from './config/sizing'
import { createSpillDir } from './config/tempdir'
import { maxSpillBytes } from './native/spill-buffer'
import { checkFiles } from './config/file-checks'
import { tuneMemoryThresholds } from './reporting/tune'
import { levelLog, resolveLogger, type Logger } from './base/logger'
import { signalOf, unlessAborted } from './base/abort'

export interface SetupResult {
  client: Client
  cluster: LocalCluster
  /** The cluster's spill directory. */
  tempDir: string
  spec: MemorySpec
  resources: Resources
  config: SetupConfig
  /** Where spillway's messages go: the `logger` option, else stderr (nothing when silenceLogs). */
  logger: Logger
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * setupClient's options: SetupConfig's (plain data, also flags and profile
 * files) and `logger`, which is code and so lives beside them.
 */
export type SetupClientOptions = (SetupOptions | { config: SetupConfig }) & {
  /** Any object with info, warn, error and debug (console, a pino logger); default: stderr. Nothing goes to stdout. */
  logger?: Logger
}

function resolveConfig(options: SetupOptions | { config: SetupConfig }): SetupConfig {
  if (options && typeof options === 'object' && 'config' in options) {
    const { config, ...rest } = options as { config: unknown }
    if (!(config instanceof SetupConfig)) {
      throw new ConfigError([{ field: 'config', value: config, allowed: 'a SetupConfig instance' }])
    }
    if (Object.keys(rest).length) return new SetupConfig({ ...config.toJSON(), ...(rest as SetupOptions) })
    return config
  }
  return new SetupConfig(options as SetupOptions)
}

/** Where workers from elsewhere join, if anywhere: loopback unless an address or interface is given. */
function listenAddress(config: SetupConfig): string | undefined {
  if (!config.schedulerFile && !config.schedulerAddress && !config.schedulerInterface) return undefined
  const given = config.schedulerAddress ? parseAddress(config.schedulerAddress) : undefined
  const e = given?.kind === 'tcp' || given?.kind === 'tls' ? given : { kind: 'tcp' as const, host: '127.0.0.1', port: 0 }
  // A certificate means TLS, whatever scheme the address was written with.
  const kind = config.tlsCert ? ('tls' as const) : e.kind
  const host = config.schedulerInterface ? addressOfInterface(config.schedulerInterface, 'schedulerInterface') : e.host
  return formatAddress({ kind, host, port: e.port })
}

/**
 * Starts a local cluster and its client. `signal`: aborting it while the
 * cluster starts rejects with the signal's reason and closes whatever was
 * started (workers, spill directory); once setupClient has resolved it has
 * no effect.
 */
export async function setupClient(options: SetupClientOptions & { signal?: AbortSignal } = {}): Promise<SetupResult> {
  const { signal: givenSignal, logger: given, ...rest } = (options ?? {}) as SetupClientOptions & { signal?: unknown } & Record<string, unknown>
  const signal = signalOf({ signal: givenSignal }, 'setupClient')
  const plain = options && typeof options === 'object' && !Array.isArray(options) ? (rest as SetupOptions) : (options as SetupOptions)
  const setup = start(plain, given, signal)
  // Aborted midway: what was started is closed once it is up.
  return unlessAborted(signal, setup, () => void setup.then((r) => r[Symbol.asyncDispose]()).catch(() => {}))
}

async function start(options: SetupOptions | { config: SetupConfig }, given: Logger | undefined, signal: AbortSignal | undefined): Promise<SetupResult> {
  let config = resolveConfig(options)
  const logger = resolveLogger(given, config.silenceLogs)
  checkFiles(config)
  // Ranks other than 0 become workers here and never return.
  if (config.cluster === 'allocation') config = await allocationConfig(config, process.env, (m) => logger.info(m))
  const resources = await detectResources()
  const spec = computeMemorySpec(config, resources)
  logger.debug('resources %j; sizing %j', resources, spec)
  const thresholds = {
    target: config.memoryTarget,
    spill: config.memorySpill,
    pause: config.memoryPause,
    terminate: config.memoryTerminate,
  }
  if (signal?.aborted) throw new Error('aborted before the cluster started')
  const spillDir = await createSpillDir(config, { expectedSpillBytes: spec.usableBytes, logger })
  const log = levelLog(logger)
  let cluster: LocalCluster
  try {
    cluster = await LocalCluster.start({
      nWorkers: config.localWorkers ?? spec.nWorkers,
      threadsPerWorker: spec.threadsPerWorker,
      memoryLimit: spec.perWorkerBytes,
      thresholds,
      spillDir: spillDir.path,
      codec: config.spillCompression,
      maxSpill: maxSpillBytes(config.maxSpill) ?? undefined,
      processes: spec.processes,
      stuckTimeoutMs: config.stuckTimeout === undefined ? undefined : config.stuckTimeout * 1000,
      pausedRestartMs: config.pausedRestart * 1000,
      releasedGraceMs: config.releasedTaskGrace * 1000,
      importTimeoutMs: config.importTimeout * 1000,
      listen: listenAddress(config),
      schedulerFile: config.schedulerFile,
      workerTtlMs: config.workerTtl === undefined ? undefined : config.workerTtl * 1000,
      tls: config.tlsCert ? { cert: config.tlsCert, key: config.tlsKey, ca: config.tlsCa } : undefined,
      cleanup: () => spillDir.remove(),
      log,
    })
  } catch (e) {
    await spillDir.remove()
    throw e
  }
  logger.info(
    formatSummary(spec, {
      spillDir: spillDir.path,
      spillCompression: config.spillCompression,
      commCompression: config.commCompression,
      listening: cluster.remote?.address,
      localWorkers: config.localWorkers,
    }),
  )
  const client = new Client(cluster, { ownsCluster: true, silenceLogs: config.silenceLogs, maxGraphTasks: config.maxGraphTasks, logger })
  if (config.dashboard) await startDashboardFor(client, config, logger)
  if (config.adaptiveMemory) logger.info((await tuneMemoryThresholds(client)).summary())
  return {
    client,
    cluster,
    tempDir: spillDir.path,
    spec,
    resources,
    config,
    logger,
    async [Symbol.asyncDispose]() {
      await client.close()
      await cluster.close()
    },
  }
}
