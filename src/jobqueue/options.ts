// Options of the job-queue clusters (SlurmCluster, PbsCluster), checked in
// one place: every bad one is named, with what is allowed.

import { memorySizeProblem, parseBytes } from '../base/units'
import type { Logger } from '../base/logger'
import { ConfigError, type ConfigProblem } from '../base/errors'
import { closestName } from '../base/suggest'

export interface JobQueueOptions {
  /** Cores each job asks for. */
  cores: number
  /** Memory each job asks for: bytes, or a size such as '16 GiB' or '16GB' (16·10⁹ bytes). */
  memory: number | string
  /** Worker processes per job (they share its cores and memory); default 1. */
  processes?: number
  /** Each job's walltime, 'HH:MM:SS' (or 'MM:SS', or seconds); default '01:00:00'. Workers retire a little before it. */
  walltime?: string | number
  /** The queue (SLURM partition, PBS queue). */
  queue?: string
  jobName?: string
  /** Extra header lines, without the '#SBATCH' / '#PBS' prefix (e.g. '--qos=high', '-l wd'). */
  jobExtraDirectives?: string[]
  /** Header lines to leave out: any line containing one of these strings (e.g. '--mem' where the site forbids it). */
  jobDirectivesSkip?: string[]
  /** Shell lines run before the worker starts (module load, source an environment). */
  jobScriptPrologue?: string[]
  /** Where job scripts, their output and the scheduler file go; a directory every node sees. Default: the working directory. */
  logDirectory?: string
  /** The scheduler file the jobs read; default <logDirectory>/spillway-scheduler-<pid>.json. */
  schedulerFile?: string
  /** The scheduler and workers listen on this interface's address (e.g. 'ib0'); default: this node's first non-loopback address. */
  interface?: string
  /** Spill base on the compute nodes (default: $PBS_JOBFS, $TMPDIR, the OS temp dir). */
  tempBaseDir?: string
  /** Seconds a worker waits for a lost scheduler before it exits; default 60. */
  deathTimeout?: number
  /** The command that runs spillway on the nodes; default: this Node and this spillway. */
  command?: string[]
  silenceLogs?: boolean
  /** Where the cluster's messages go (console's or pino's shape); default: stderr. */
  logger?: Logger
}

export interface ResolvedJobOptions {
  cores: number
  memoryBytes: number
  processes: number
  walltimeSeconds: number
  queue?: string
  jobName: string
  jobExtraDirectives: string[]
  jobDirectivesSkip: string[]
  jobScriptPrologue: string[]
  logDirectory: string
  schedulerFile?: string
  interface?: string
  tempBaseDir?: string
  deathTimeout: number
  command: string[]
}

/** Bytes of a job's memory or disk (base/units.ts, as every size), or undefined when `memorySizeProblem` refuses it. */
export function parseMemory(v: unknown): number | undefined {
  return memorySizeProblem(v) === undefined ? parseBytes(v) : undefined
}

export function parseWalltime(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v > 0 ? v : undefined
  if (typeof v !== 'string') return undefined
  const parts = v.trim().split(':')
  if (parts.length > 3 || parts.some((p) => !/^\d+$/.test(p))) return undefined
  const s = parts.reduce((acc, p) => acc * 60 + Number(p), 0)
  return s > 0 ? s : undefined
}

export function formatWalltime(seconds: number): string {
  const two = (n: number) => String(n).padStart(2, '0')
  return `${two(Math.floor(seconds / 3600))}:${two(Math.floor((seconds % 3600) / 60))}:${two(seconds % 60)}`
}

const stringList = (v: unknown) => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string'))

export const COMMON_KEYS = [
  'cores',
  'memory',
  'processes',
  'walltime',
  'queue',
  'jobName',
  'jobExtraDirectives',
  'jobDirectivesSkip',
  'jobScriptPrologue',
  'logDirectory',
  'schedulerFile',
  'interface',
  'tempBaseDir',
  'deathTimeout',
  'command',
  'silenceLogs',
  'logger',
]

/** A flavour's own option: a name (letters, digits, dot, dash, underscore) when given. */
export function nameProblem(o: Record<string, unknown>, field: string, what: string): ConfigProblem[] {
  const v = o?.[field]
  return v === undefined || (typeof v === 'string' && /^[\w.-]+$/.test(v)) ? [] : [{ field, value: v, allowed: `${what}: letters, digits, dot, dash and underscore` }]
}

/**
 * Checks the common options, with the flavour's own keys (`extraKeys`) and
 * their problems; throws one ConfigError naming every bad field.
 */
export function resolveJobOptions(o: JobQueueOptions, extraKeys: string[], extraProblems: ConfigProblem[], what: string, defaultCommand: () => string[]): ResolvedJobOptions {
  const problems: ConfigProblem[] = [...extraProblems]
  if (!o || typeof o !== 'object') throw new ConfigError([{ field: 'options', value: o, allowed: 'an object with at least cores and memory' }], what)
  const known = [...COMMON_KEYS, ...extraKeys]
  for (const k of Object.keys(o)) {
    if (known.includes(k)) continue
    const guess = closestName(k, known)
    problems.push({ field: k, value: (o as any)[k], allowed: guess ? `no such option; did you mean ${guess}?` : `one of ${known.join(', ')}` })
  }
  if (!(Number.isInteger(o.cores) && o.cores > 0)) problems.push({ field: 'cores', value: o.cores, allowed: 'a positive integer (cores per job)' })
  const memoryBytes = parseMemory(o.memory)
  if (memoryBytes === undefined) problems.push({ field: 'memory', value: o.memory, allowed: `memory per job: ${memorySizeProblem(o.memory)}` })
  const processes = o.processes ?? 1
  if (!(Number.isInteger(processes) && processes > 0)) problems.push({ field: 'processes', value: o.processes, allowed: 'a positive integer (worker processes per job)' })
  const walltimeSeconds = parseWalltime(o.walltime ?? '01:00:00')
  if (walltimeSeconds === undefined) problems.push({ field: 'walltime', value: o.walltime, allowed: "'HH:MM:SS', 'MM:SS' or a number of seconds" })
  for (const f of ['jobExtraDirectives', 'jobDirectivesSkip', 'jobScriptPrologue', 'command'] as const) {
    if (!stringList(o[f])) problems.push({ field: f, value: o[f], allowed: 'an array of strings' })
  }
  for (const f of ['queue', 'jobName', 'logDirectory', 'schedulerFile', 'interface', 'tempBaseDir'] as const) {
    if (o[f] !== undefined && (typeof o[f] !== 'string' || o[f] === '')) problems.push({ field: f, value: o[f], allowed: 'a non-empty string' })
  }
  if (o.jobName !== undefined && !/^[A-Za-z0-9._-]+$/.test(o.jobName)) problems.push({ field: 'jobName', value: o.jobName, allowed: 'letters, digits, dot, dash and underscore' })
  const deathTimeout = o.deathTimeout ?? 60
  if (!(typeof deathTimeout === 'number' && deathTimeout > 0)) problems.push({ field: 'deathTimeout', value: o.deathTimeout, allowed: 'a positive number of seconds' })
  if (o.command !== undefined && o.command.length === 0) problems.push({ field: 'command', value: o.command, allowed: 'the program and its first arguments, e.g. ["node", "/path/to/spillway/bin/spillway.js"]' })
  if (problems.length) throw new ConfigError(problems, what)
  return {
    cores: o.cores,
    memoryBytes: memoryBytes!,
    processes,
    walltimeSeconds: walltimeSeconds!,
    queue: o.queue,
    jobName: o.jobName ?? 'spillway-worker',
    jobExtraDirectives: o.jobExtraDirectives ?? [],
    jobDirectivesSkip: o.jobDirectivesSkip ?? [],
    jobScriptPrologue: o.jobScriptPrologue ?? [],
    logDirectory: o.logDirectory ?? process.cwd(),
    schedulerFile: o.schedulerFile,
    interface: o.interface,
    tempBaseDir: o.tempBaseDir,
    deathTimeout,
    command: o.command ?? defaultCommand(),
  }
}
