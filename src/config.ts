import { readFileSync } from 'node:fs'
import { extname } from 'node:path'
import YAML from 'yaml'
import { validCodecNames } from './codecs'
import { ConfigError, type ConfigProblem } from './errors'
import { closestName } from './suggest'
import { PROFILES } from './profiles'

export type WorkloadType = 'cpu' | 'io' | 'mixed'
export const WORKLOAD_TYPES: readonly WorkloadType[] = ['cpu', 'io', 'mixed']

/** Options of setupClient: dask_setup's, in camelCase. */
export interface SetupOptions {
  /** Name of a built-in profile (PROFILES) used as the base; explicit options override it. */
  profile?: string
  workloadType?: WorkloadType
  /** Cap on worker processes; by default the topology's choice for the usable cores. */
  maxWorkers?: number
  /** Cap on the memory spillway may use (GiB); by default all usable RAM. */
  maxMemGb?: number
  /** Memory held back for the OS, page cache and filesystem clients (GiB); unset = 20% of RAM, clamped to 4–50. */
  reserveMemGb?: number
  dashboard?: boolean
  /** 0 = a free port chosen at start-up (as dask_setup's ":0"), so two clusters on one node never collide. */
  dashboardPort?: number
  dashboardAddress?: string
  memoryTarget?: number
  memorySpill?: number
  memoryPause?: number
  memoryTerminate?: number
  spillCompression?: string
  commCompression?: boolean
  tempBaseDir?: string
  adaptiveMemory?: boolean
  silenceLogs?: boolean
  /** Overrides the threads per worker that the workload type would choose. */
  threadsPerWorker?: number
  /**
   * Seconds a paused worker that cannot spill (its disk full, or nothing
   * left to spill) may go without progress before the work it holds up
   * fails with ERR_SPILLWAY_SPILL_FULL / ERR_SPILLWAY_WORKER_STUCK; default 30.
   */
  stuckTimeout?: number
  /**
   * Write a scheduler file here (and the cluster's secret beside it, FILE.secret,
   * both 0600) for `spillway worker --scheduler-file FILE` on other nodes; removed on close.
   */
  schedulerFile?: string
  /** tcp://host:port where workers from elsewhere join (port 0 picks one); default tcp://127.0.0.1:0 with schedulerFile. */
  schedulerAddress?: string
  /** Listen on this network interface's address (e.g. 'ib0') instead of schedulerAddress's host. */
  schedulerInterface?: string
  /** Workers started on this node (default: as sized); 0 leaves the work to `spillway worker` processes. */
  localWorkers?: number
  /** PEM certificate and key: workers from elsewhere join over TLS (tls://), as well as proving the secret. */
  tlsCert?: string
  tlsKey?: string
  /** PEM CA: joining workers must also show a certificate it signed. */
  tlsCa?: string
  /** Seconds of silence after which a worker that joined from elsewhere is taken as lost (its node gone); default 300, as Dask's worker-ttl. */
  workerTtl?: number
  /**
   * 'local' (default): the scheduler and its workers on this node. 'allocation': every rank of a
   * batch allocation runs the same script (srun, mpiexec, pbsdsh); rank 0 gets the client and the
   * others become workers and never return (see README, "Many nodes").
   */
  cluster?: ClusterKind
}

export type ClusterKind = 'local' | 'allocation'
export const CLUSTER_KINDS: readonly ClusterKind[] = ['local', 'allocation']

type Kind = 'number' | 'integer' | 'boolean' | 'string'

// Every option and the JS type it must have; the single source for unknown-name and type checks.
export const KINDS: { readonly [K in keyof Required<SetupOptions>]: Kind } = {
  profile: 'string',
  workloadType: 'string',
  maxWorkers: 'integer',
  maxMemGb: 'number',
  reserveMemGb: 'number',
  dashboard: 'boolean',
  dashboardPort: 'integer',
  dashboardAddress: 'string',
  memoryTarget: 'number',
  memorySpill: 'number',
  memoryPause: 'number',
  memoryTerminate: 'number',
  spillCompression: 'string',
  commCompression: 'boolean',
  tempBaseDir: 'string',
  adaptiveMemory: 'boolean',
  silenceLogs: 'boolean',
  threadsPerWorker: 'integer',
  stuckTimeout: 'number',
  schedulerFile: 'string',
  schedulerAddress: 'string',
  schedulerInterface: 'string',
  localWorkers: 'integer',
  tlsCert: 'string',
  tlsKey: 'string',
  tlsCa: 'string',
  workerTtl: 'number',
  cluster: 'string',
}

export const OPTION_NAMES = Object.keys(KINDS) as (keyof SetupOptions)[]

const DEFAULTS = {
  // dask_setup's DaskSetupConfig and setup_dask_client both default workload_type to "io".
  workloadType: 'io' as WorkloadType,
  dashboard: true,
  dashboardPort: 0,
  dashboardAddress: '127.0.0.1',
  memoryTarget: 0.75,
  memorySpill: 0.85,
  memoryPause: 0.92,
  memoryTerminate: 0.98,
  spillCompression: 'auto',
  commCompression: false,
  adaptiveMemory: false,
  silenceLogs: false,
}

export { PROFILES, type Profile } from './profiles'

type Resolved = SetupOptions & typeof DEFAULTS

const THRESHOLDS = ['memoryTarget', 'memorySpill', 'memoryPause', 'memoryTerminate'] as const

function describeKind(kind: Kind): string {
  return kind === 'integer' ? 'an integer' : `a ${kind}`
}

function hasKind(value: unknown, kind: Kind): boolean {
  if (kind === 'integer') return typeof value === 'number' && Number.isInteger(value)
  if (kind === 'number') return typeof value === 'number' && Number.isFinite(value)
  return typeof value === kind
}

/** Merges option layers; `undefined` (and YAML's null) means "not given", so it never hides a lower layer. */
function mergeOptions(...layers: Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const layer of layers) {
    for (const [k, v] of Object.entries(layer)) if (v !== undefined && v !== null) out[k] = v
  }
  return out
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

export class SetupConfig {
  readonly profile?: string
  readonly workloadType: WorkloadType
  readonly maxWorkers?: number
  readonly maxMemGb?: number
  readonly reserveMemGb?: number
  readonly dashboard: boolean
  readonly dashboardPort: number
  readonly dashboardAddress: string
  readonly memoryTarget: number
  readonly memorySpill: number
  readonly memoryPause: number
  readonly memoryTerminate: number
  readonly spillCompression: string
  readonly commCompression: boolean
  readonly tempBaseDir?: string
  readonly adaptiveMemory: boolean
  readonly silenceLogs: boolean
  readonly threadsPerWorker?: number
  readonly stuckTimeout?: number
  readonly schedulerFile?: string
  readonly schedulerAddress?: string
  readonly schedulerInterface?: string
  readonly localWorkers?: number
  readonly tlsCert?: string
  readonly tlsKey?: string
  readonly tlsCa?: string
  readonly workerTtl?: number
  readonly cluster?: ClusterKind

  /** Validates everything at once: one ConfigError lists every bad field. */
  constructor(options: SetupOptions | SetupConfig = {}, what = 'configuration') {
    const raw: unknown = options instanceof SetupConfig ? options.toJSON() : options
    if (!isPlainObject(raw)) {
      throw new ConfigError([{ field: 'options', value: raw, allowed: 'an object of setup options' }], what)
    }
    const problems: ConfigProblem[] = []
    let base: SetupOptions = {}
    const profileName = raw.profile
    if (profileName !== undefined && profileName !== null) {
      // Own names only: 'toString' or '__proto__' would otherwise find Object.prototype's members.
      const found = typeof profileName === 'string' && Object.hasOwn(PROFILES, profileName) ? PROFILES[profileName] : undefined
      if (found) base = found.options
      // A non-string profile is reported by the type check below.
      else if (typeof profileName === 'string') problems.push({ field: 'profile', value: profileName, allowed: `one of ${Object.keys(PROFILES).join(', ')}` })
    }
    const merged = mergeOptions(base as Record<string, unknown>, raw)
    const opts: Record<string, unknown> = {}
    const mistyped = new Set<string>()
    for (const [name, value] of Object.entries(merged)) {
      const kind = (KINDS as Record<string, Kind | undefined>)[name]
      if (!kind) {
        const guess = closestName(name, OPTION_NAMES)
        problems.push({
          field: name,
          value,
          allowed: guess ? `no such option; did you mean ${guess}?` : `no such option; known options: ${OPTION_NAMES.join(', ')}`,
        })
      } else if (!hasKind(value, kind)) {
        problems.push({ field: name, value, allowed: describeKind(kind) })
        mistyped.add(name)
      } else {
        opts[name] = value
      }
    }
    const o = mergeOptions(DEFAULTS, opts) as unknown as Resolved
    checkValues(o, mistyped, problems)
    if (problems.length > 0) throw new ConfigError(problems, what)

    this.profile = o.profile
    this.workloadType = o.workloadType
    this.maxWorkers = o.maxWorkers
    this.maxMemGb = o.maxMemGb
    this.reserveMemGb = o.reserveMemGb
    this.dashboard = o.dashboard
    this.dashboardPort = o.dashboardPort
    this.dashboardAddress = o.dashboardAddress
    this.memoryTarget = o.memoryTarget
    this.memorySpill = o.memorySpill
    this.memoryPause = o.memoryPause
    this.memoryTerminate = o.memoryTerminate
    this.spillCompression = o.spillCompression
    this.commCompression = o.commCompression
    this.tempBaseDir = o.tempBaseDir
    this.adaptiveMemory = o.adaptiveMemory
    this.silenceLogs = o.silenceLogs
    this.threadsPerWorker = o.threadsPerWorker
    this.stuckTimeout = o.stuckTimeout
    this.schedulerFile = o.schedulerFile
    this.schedulerAddress = o.schedulerAddress
    this.schedulerInterface = o.schedulerInterface
    this.localWorkers = o.localWorkers
    this.tlsCert = o.tlsCert
    this.tlsKey = o.tlsKey
    this.tlsCa = o.tlsCa
    this.workerTtl = o.workerTtl
    this.cluster = o.cluster
    Object.freeze(this)
  }

  /** A built-in profile by name, with explicit options on top. */
  static profile(name: string, overrides: SetupOptions = {}): SetupConfig {
    return new SetupConfig({ ...overrides, profile: name })
  }

  /**
   * A profile from a JSON or YAML file. Keys may be camelCase or dask_setup's snake_case, at the
   * top level or under `config:` (dask_setup's profile layout); `profile:` (or dask_setup's
   * `based_on:`) names a built-in profile as the base. Explicit overrides win over the file.
   */
  static fromFile(path: string, overrides: SetupOptions = {}): SetupConfig {
    const what = `profile file ${path}`
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (err) {
      throw new ConfigError([{ field: 'path', value: path, allowed: `a readable file (${(err as Error).message})` }], what)
    }
    let data: unknown
    try {
      // YAML is a superset of JSON, but JSON.parse gives the clearer error for a .json file.
      data = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : YAML.parse(text)
    } catch (err) {
      throw new ConfigError([{ field: 'path', value: path, allowed: `valid JSON or YAML (${(err as Error).message})` }], what)
    }
    if (!isPlainObject(data)) {
      throw new ConfigError([{ field: 'path', value: path, allowed: 'a JSON or YAML object of setup options' }], what)
    }
    return new SetupConfig({ ...profileFileOptions(data), ...withoutUndefined(overrides) }, what)
  }

  /** Every option that is set, under its option name: `new SetupConfig(c.toJSON())` is the same config. */
  toJSON(): SetupOptions {
    const out: Record<string, unknown> = {}
    for (const name of OPTION_NAMES) {
      const v = this[name]
      if (v !== undefined) out[name] = v
    }
    return out as SetupOptions
  }
}

function withoutUndefined(o: SetupOptions): SetupOptions {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as SetupOptions
}

// Profile metadata dask_setup writes next to the options; it does not configure anything.
const FILE_METADATA = new Set(['name', 'description', 'tags', 'version', 'builtin', 'createdAt', 'modifiedAt'])

function snakeToCamel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
}

function profileFileOptions(data: Record<string, unknown>): Record<string, unknown> {
  const top: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(data)) top[snakeToCamel(k)] = v
  const nested = isPlainObject(top.config) ? top.config : undefined
  const out: Record<string, unknown> = {}
  const base = top.profile ?? top.basedOn
  if (base !== undefined && base !== null) out.profile = base
  for (const [k, v] of Object.entries(nested ?? top)) {
    const key = snakeToCamel(k)
    if (key === 'basedOn') continue
    if (!nested && (key === 'config' || FILE_METADATA.has(key))) continue
    out[key] = v
  }
  return out
}

function checkValues(o: Resolved, mistyped: Set<string>, problems: ConfigProblem[]): void {
  const bad = (field: string, allowed: string) => problems.push({ field, value: (o as unknown as Record<string, unknown>)[field], allowed })
  // A mistyped field was already reported and `o` holds its default instead; checking that default
  // (e.g. threshold order against it) would report a value the user never gave.
  const ok = (field: string) => !mistyped.has(field)

  if (ok('workloadType') && !WORKLOAD_TYPES.includes(o.workloadType)) bad('workloadType', `one of ${WORKLOAD_TYPES.map((w) => `'${w}'`).join(', ')}`)
  if (o.maxWorkers !== undefined && o.maxWorkers < 1) bad('maxWorkers', 'a positive integer')
  if (o.threadsPerWorker !== undefined && o.threadsPerWorker < 1) bad('threadsPerWorker', 'a positive integer')
  if (o.stuckTimeout !== undefined && !(o.stuckTimeout > 0)) bad('stuckTimeout', 'a positive number of seconds (default 30)')
  if (o.cluster !== undefined && ok('cluster') && !CLUSTER_KINDS.includes(o.cluster)) bad('cluster', `one of ${CLUSTER_KINDS.map((c) => `'${c}'`).join(', ')}`)
  if (o.workerTtl !== undefined && !(o.workerTtl > 0)) bad('workerTtl', 'a positive number of seconds (default 300)')
  if (o.localWorkers !== undefined && o.localWorkers < 0) bad('localWorkers', 'an integer ≥ 0 (0: only workers that join from elsewhere)')
  if (o.schedulerFile !== undefined && o.schedulerFile.trim() === '') bad('schedulerFile', 'a file path')
  if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) bad(o.tlsCert === undefined ? 'tlsCert' : 'tlsKey', 'tlsCert and tlsKey together (PEM files)')
  if (o.schedulerAddress !== undefined && !/^(tcp|tls):\/\/(\[[^\]]+\]|[^:/]+):\d{1,5}$/.test(o.schedulerAddress)) bad('schedulerAddress', 'tcp://host:port or tls://host:port (port 0 picks a free one)')
  if (o.maxMemGb !== undefined && !(o.maxMemGb > 0)) bad('maxMemGb', 'a positive number of GiB')
  // A zero reserve is a legitimate choice on a node dedicated to the job (e.g. a container with its own limit).
  if (o.reserveMemGb !== undefined && !(o.reserveMemGb >= 0)) bad('reserveMemGb', 'a number of GiB ≥ 0')
  if (o.maxMemGb !== undefined && o.reserveMemGb !== undefined && o.maxMemGb > 0 && o.reserveMemGb > o.maxMemGb) {
    bad('reserveMemGb', `at most maxMemGb (${o.maxMemGb}): the reserve comes out of maxMemGb`)
  }
  if (ok('dashboardPort') && (o.dashboardPort < 0 || o.dashboardPort > 65535)) bad('dashboardPort', 'an integer in 0–65535 (0 = a free port)')
  if (ok('dashboardAddress') && o.dashboardAddress.trim() === '') bad('dashboardAddress', 'a host name or IP address to listen on')
  if (o.tempBaseDir !== undefined && o.tempBaseDir.trim() === '') bad('tempBaseDir', 'a directory path')
  if (ok('spillCompression')) {
    const valid = validCodecNames()
    if (!valid.includes(o.spillCompression)) bad('spillCompression', `a codec compiled into this build: ${valid.map((c) => `'${c}'`).join(', ')}`)
  }

  const inRange = THRESHOLDS.filter((t) => {
    if (!ok(t)) return false
    const v = o[t]
    if (v > 0 && v <= 1) return true
    bad(t, 'a fraction of the worker memory limit in (0, 1]')
    return false
  })
  if (inRange.length === THRESHOLDS.length) {
    for (let i = 1; i < THRESHOLDS.length; i++) {
      const [lower, field] = [THRESHOLDS[i - 1], THRESHOLDS[i]]
      if (!(o[field] > o[lower])) {
        bad(field, `greater than ${lower} (${o[lower]}): thresholds must increase, memoryTarget < memorySpill < memoryPause < memoryTerminate`)
      }
    }
  }
}
