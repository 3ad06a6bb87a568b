// Every setupClient option, declared once: its name, JS type, default, the
// check of its value and its doc line. SetupConfig's validation, defaults
// and toJSON, the CLI's flags and their help all read this table, so a new
// option is one entry here. (A schema library such as zod would declare the
// types as well, but not the "did you mean" and every-field-at-once errors
// ConfigError gives, nor the doc lines the CLI prints; the table is small.)

import { isIPv4, isIPv6 } from 'node:net'
import { validCodecNames } from '../native/codecs'
import { MAX_SPILL_ALLOWED, maxSpillBytes } from '../native/spill-buffer'
import type { Thresholds } from './thresholds'

export type WorkloadType = 'cpu' | 'io' | 'mixed'
export const WORKLOAD_TYPES: readonly WorkloadType[] = ['cpu', 'io', 'mixed']

export type ClusterKind = 'local' | 'allocation'
export const CLUSTER_KINDS: readonly ClusterKind[] = ['local', 'allocation']

/** 'size': bytes as a number, or a string such as '10 GiB' (base/units.ts). */
export type Kind = 'number' | 'integer' | 'boolean' | 'string' | 'size'

type KindType<K extends Kind> = K extends 'boolean' ? boolean : K extends 'string' ? string : K extends 'size' ? number | string : number

/** One option: what it must be, what it is unless given, and what it does. */
export interface OptionSpec<T = unknown> {
  kind: Kind
  /** Its value when not given; options without one stay undefined (chosen later, e.g. by sizing). */
  default?: T
  /** The allowed values, for an option that takes one of a few strings. */
  values?: readonly T[]
  /** `false` is a value of its own beside the kind: off, or no cap (as Dask's `target: False`). */
  orFalse?: boolean
  /** Why a well-typed value (never `false`) is refused (the "allowed" of the error), or undefined when it is fine. */
  check?: (value: Exclude<T, false>) => string | undefined
  /** One line for the reference and the CLI's help. */
  doc: string
}

/** Why a tcp:// or tls:// address is refused: its form, its port (0–65535) or a dotted host that is no IPv4 address. */
function addressProblem(v: string): string | undefined {
  const form = 'tcp://host:port or tls://host:port (port 0 picks a free one)'
  const m = /^(tcp|tls):\/\/(\[[^\]]+\]|[^:/]+):(\d{1,5})$/.exec(v)
  if (!m) return form
  if (Number(m[3]) > 65535) return `${form}; the port must be in 0–65535`
  const host = m[2]
  if (host.startsWith('[')) return isIPv6(host.slice(1, -1)) ? undefined : `${form}; ${host} is no IPv6 address`
  if (/^[\d.]+$/.test(host)) return isIPv4(host) ? undefined : `${form}; ${host} is no IPv4 address (four numbers in 0–255)`
  return /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(host) ? undefined : `${form}; ${JSON.stringify(host)} is no host name`
}

/** More local workers than this is a typo, not a node: each needs 1 GiB and a process. */
export const MAX_LOCAL_WORKERS = 1024

const positiveInt = (what: string) => (v: number) => (v >= 1 ? undefined : `a positive integer${what}`)
const positiveSeconds = (dflt: number) => (v: number) => (v > 0 ? undefined : `a positive number of seconds (default ${dflt})`)
const nonEmpty = (what: string) => (v: string) => (v.trim() !== '' ? undefined : what)

// D records whether a default was given, so ResolvedOptions knows which options are always set.
function option<K extends Kind, T extends KindType<K> | false = KindType<K>, D extends T | undefined = undefined>(spec: {
  kind: K
  default?: D
  values?: readonly NoInfer<T>[]
  orFalse?: false extends T ? true : never
  check?: (value: Exclude<NoInfer<T>, false>) => string | undefined
  doc: string
}): OptionSpec<T> & { kind: K } & (undefined extends D ? unknown : { default: T }) {
  return spec as never
}

export const OPTIONS = {
  profile: option({ kind: 'string', doc: 'a built-in profile (PROFILES) as the base; explicit options override it' }),
  workloadType: option<'string', WorkloadType, 'io'>({
    kind: 'string',
    // dask_setup's DaskSetupConfig and setup_dask_client both default workload_type to "io".
    default: 'io',
    values: WORKLOAD_TYPES,
    doc: "'cpu' (one thread per worker, a worker per core), 'io' (threads for waiting) or 'mixed'",
  }),
  maxWorkers: option({ kind: 'integer', check: positiveInt(''), doc: 'cap on worker processes (default: the topology’s choice for the usable cores)' }),
  maxMemGb: option({ kind: 'number', check: (v) => (v > 0 ? undefined : 'a positive number of GiB'), doc: 'cap on the memory spillway may use, in GiB (default: all usable RAM)' }),
  // A zero reserve is a legitimate choice on a node dedicated to the job (e.g. a container with its own limit).
  reserveMemGb: option({ kind: 'number', check: (v) => (v >= 0 ? undefined : 'a number of GiB ≥ 0'), doc: 'memory held back for the OS and page cache, in GiB (default 20% of RAM, clamped to 4–50)' }),
  dashboard: option({ kind: 'boolean', default: true, doc: 'serve the live dashboard' }),
  dashboardPort: option({ kind: 'integer', default: 0, check: (v) => (v >= 0 && v <= 65535 ? undefined : 'an integer in 0–65535 (0 = a free port)'), doc: "the dashboard's port; 0 = a free port chosen at start-up, so two clusters never collide" }),
  dashboardAddress: option({ kind: 'string', default: '127.0.0.1', check: nonEmpty('a host name or IP address to listen on'), doc: 'the address the dashboard listens on' }),
  memoryTarget: option<'number', number | false, 0.75>({
    kind: 'number',
    orFalse: true,
    default: 0.75,
    doc: 'spill LRU values when managed memory passes this fraction of the worker limit; false: managed memory alone never spills',
  }),
  memorySpill: option<'number', number | false, 0.85>({
    kind: 'number',
    orFalse: true,
    default: 0.85,
    doc: 'spill when process memory passes this fraction, until below target (or this fraction when target is false); false: never',
  }),
  memoryPause: option({ kind: 'number', default: 0.92, doc: 'take no new tasks above this fraction' }),
  memoryTerminate: option({ kind: 'number', default: 0.98, doc: 'the nanny restarts the worker above this fraction' }),
  spillCompression: option({
    kind: 'string',
    default: 'auto',
    check: (v) => {
      const valid = validCodecNames()
      return valid.includes(v) ? undefined : `a codec compiled into this build: ${valid.map((c) => `'${c}'`).join(', ')}`
    },
    doc: "the spill codec: 'auto' (lz4, with the byte shuffle for typed values it shrinks more), 'lz4', 'zstd', 'snappy', 'zlib' or 'none'; each but 'none' also as 'lz4+shuffle' and so on, which shuffles typed values' bytes first",
  }),
  maxSpill: option<'size', number | string | false, false>({
    kind: 'size',
    orFalse: true,
    default: false,
    check: (v) => (maxSpillBytes(v) === undefined ? MAX_SPILL_ALLOWED : undefined),
    doc: "cap on the bytes each worker's spill files take on disk, after compression: a number or a size ('10 GiB'); past it values stay in memory (Dask's max-spill; default false: no cap)",
  }),
  commCompression: option({ kind: 'boolean', default: false, doc: 'compress values moving between workers' }),
  tempBaseDir: option({ kind: 'string', check: nonEmpty('a directory path'), doc: 'where the spill directory is made (default $PBS_JOBFS, else $TMPDIR, else the OS temp dir)' }),
  adaptiveMemory: option({ kind: 'boolean', default: false, doc: 'run tuneMemoryThresholds once at start-up' }),
  silenceLogs: option({ kind: 'boolean', default: false, doc: 'no configuration summary, warnings or progress bars' }),
  threadsPerWorker: option({ kind: 'integer', check: positiveInt(''), doc: 'threads per worker, instead of the workload type’s choice' }),
  stuckTimeout: option({ kind: 'number', default: 30, check: positiveSeconds(30), doc: 'seconds a paused worker that cannot spill may go without progress before the work it holds up fails (default 30)' }),
  pausedRestart: option({
    kind: 'number',
    default: 60,
    check: positiveSeconds(60),
    doc: 'seconds a worker may stay paused by memory spillway cannot spill (a task’s own, a leak) before its values move to the other workers and it is restarted (default 60; Dask leaves it paused)',
  }),
  importTimeout: option({
    kind: 'number',
    default: 60,
    check: positiveSeconds(60),
    doc: 'seconds a task module may take to import on a worker (its top-level code, a top-level await) before the tasks that need it fail with ERR_SPILLWAY_TIMEOUT (default 60)',
  }),
  releasedTaskGrace: option({
    kind: 'number',
    default: 60,
    check: positiveSeconds(60),
    doc: 'seconds a running task whose result no one holds any more (its Futures released or garbage-collected, its bag released) may ignore its abort signal before its worker is restarted (default 60; an explicit cancel() waits 5)',
  }),
  schedulerFile: option({ kind: 'string', check: nonEmpty('a file path'), doc: 'write a scheduler file (and FILE.secret, both 0600) for `spillway worker --scheduler-file` on other nodes' }),
  schedulerAddress: option({
    kind: 'string',
    check: addressProblem,
    doc: 'tcp://host:port where workers from elsewhere join (default tcp://127.0.0.1:0 with schedulerFile)',
  }),
  schedulerInterface: option({ kind: 'string', doc: "listen on this network interface's address (e.g. 'ib0') instead of schedulerAddress's host" }),
  localWorkers: option({ kind: 'integer', check: (v) => (v >= 0 && v <= MAX_LOCAL_WORKERS ? undefined : `an integer in 0–${MAX_LOCAL_WORKERS} (0: only workers that join from elsewhere)`), doc: 'workers started on this node (default: as sized); 0 leaves the work to `spillway worker` processes' }),
  tlsCert: option({ kind: 'string', doc: 'PEM certificate: workers from elsewhere join over TLS (with tlsKey)' }),
  tlsKey: option({ kind: 'string', doc: "PEM key of tlsCert" }),
  tlsCa: option({ kind: 'string', doc: 'PEM CA: joining workers must also show a certificate it signed' }),
  workerTtl: option({ kind: 'number', default: 300, check: positiveSeconds(300), doc: 'seconds of silence after which a worker that joined from elsewhere is taken as lost (as Dask’s worker-ttl)' }),
  maxGraphTasks: option({
    kind: 'integer',
    // About 400 MB of the client's heap at ~4 KB a task.
    default: 100_000,
    check: positiveInt(''),
    doc: 'tasks one persist or compute may make (default 100000): a larger graph is refused before any task is made (ERR_SPILLWAY_GRAPH_TOO_LARGE), not left to run the client out of heap',
  }),
  cluster: option<'string', ClusterKind>({
    kind: 'string',
    values: CLUSTER_KINDS,
    doc: "'local' (default): scheduler and workers on this node; 'allocation': every rank of a batch allocation runs the script and rank 0 gets the client",
  }),
}

type Options = typeof OPTIONS
type ValueOf<S> = S extends OptionSpec<infer T> ? T : never

/** Options of setupClient: dask_setup's, in camelCase (OPTIONS says what each does). */
export type SetupOptions = { [K in keyof Options]?: ValueOf<Options[K]> }

/** The options once defaults are applied: those with a default are always set. */
export type ResolvedOptions = {
  readonly [K in keyof Options as Options[K] extends { default: unknown } ? K : never]: ValueOf<Options[K]>
} & {
  readonly [K in keyof Options as Options[K] extends { default: unknown } ? never : K]?: ValueOf<Options[K]>
}

export const OPTION_NAMES = Object.keys(OPTIONS) as (keyof SetupOptions)[]

/** Every option's kind, by name (the CLI makes its flags from it). */
export const KINDS: { readonly [K in keyof SetupOptions]-?: Kind } = Object.fromEntries(OPTION_NAMES.map((n) => [n, OPTIONS[n].kind])) as never

/** The thresholds a cluster started without any takes: setupClient's defaults for memoryTarget, memorySpill, memoryPause and memoryTerminate. */
export function defaultThresholds(): Thresholds {
  return { target: OPTIONS.memoryTarget.default, spill: OPTIONS.memorySpill.default, pause: OPTIONS.memoryPause.default, terminate: OPTIONS.memoryTerminate.default }
}

/** Defaults of the options that have one. */
export function optionDefaults(): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const name of OPTION_NAMES) {
    const d = (OPTIONS[name] as OptionSpec).default
    if (d !== undefined) out[name] = d
  }
  return out
}
