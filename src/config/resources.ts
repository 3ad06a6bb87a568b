import { readFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import si from 'systeminformation'
import { ConfigError, type ConfigProblem } from '../base/errors'

export type ResourceSource = 'system' | 'cgroup' | 'pbs' | 'slurm'

/** What the machine has, before any limit on this process. */
export interface SystemSnapshot {
  totalMemoryBytes: number
  availableMemoryBytes: number
  usedMemoryBytes: number
  freeMemoryBytes: number
  swapTotalBytes: number
  swapUsedBytes: number
  swapFreeBytes: number
  physicalCores: number
  logicalCores: number
}

export interface CgroupLimits {
  memoryBytes?: number
  cpus?: number
}

export interface ResourceLimits {
  cgroupMemoryBytes?: number
  cgroupCpus?: number
  pbsMemoryBytes?: number
  pbsCpus?: number
  slurmMemoryBytes?: number
  slurmCpus?: number
}

export interface Resources extends SystemSnapshot {
  /** Cores this process may use, after cgroup and batch-system limits. */
  cores: number
  /** RAM this process may use, after cgroup and batch-system limits. */
  memoryBytes: number
  source: { memory: ResourceSource; cores: ResourceSource }
  limits: ResourceLimits
  /** HPC variables present in the environment (PBS_JOBFS, TMPDIR, PBS_MEM, SLURM_*, ...). */
  hpcVars: Record<string, string>
}

export const HPC_VARS: Readonly<Record<string, string>> = {
  PBS_JOBFS: 'Fast local storage directory',
  TMPDIR: 'Temporary directory',
  PBS_MEM: 'Allocated memory (PBS)',
  PBS_VMEM: 'Allocated virtual memory (PBS)',
  PBS_NCPUS: 'Allocated CPUs (PBS)',
  PBS_JOBID: 'Job id (PBS)',
  SLURM_JOB_ID: 'Job id (SLURM)',
  SLURM_CPUS_ON_NODE: 'CPUs on this node (SLURM)',
  SLURM_CPUS_PER_TASK: 'CPUs per task (SLURM)',
  SLURM_MEM_PER_NODE: 'Memory per node (SLURM)',
  SLURM_MEM_PER_CPU: 'Memory per CPU (SLURM)',
  SLURM_TMPDIR: 'Job-local temporary directory (SLURM)',
}

const KIB = 1024
const UNITS: Record<string, number> = {
  b: 1,
  k: KIB, kb: KIB, kib: KIB, ki: KIB,
  m: KIB ** 2, mb: KIB ** 2, mib: KIB ** 2, mi: KIB ** 2,
  g: KIB ** 3, gb: KIB ** 3, gib: KIB ** 3, gi: KIB ** 3,
  t: KIB ** 4, tb: KIB ** 4, tib: KIB ** 4, ti: KIB ** 4,
  p: KIB ** 5, pb: KIB ** 5, pib: KIB ** 5, pi: KIB ** 5,
}

// Gadi writes PBS_MEM as raw bytes ("322122547200"), other PBS sites as MiB ("16384"): no real
// allocation is under 1e9 bytes when given in bytes, nor over 1e9 MiB (~950 TiB) when given in MiB.
const PBS_BYTES_THRESHOLD = 1_000_000_000

function malformed(name: string, value: string, allowed: string): ConfigError {
  return new ConfigError([{ field: name, value, allowed }], 'environment')
}

/**
 * Bytes of a PBS or SLURM memory variable. Suffixes are binary, as both schedulers define them
 * (PBS "kb" and SLURM "K" are 1024 bytes). A bare number is MB for SLURM; for PBS it is bytes when
 * ≥ 1e9 (Gadi) and MiB otherwise.
 */
export function parseBatchMemory(name: string, value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value)
  const allowed = name.startsWith('SLURM')
    ? 'a size such as 4000 (MB), 4000M, 16G or 1T'
    : 'a size such as 16384 (MiB), 322122547200 (bytes), 190gb, 4000mb or 512kb'
  if (!m) throw malformed(name, value, allowed)
  const amount = Number(m[1])
  const unit = m[2].toLowerCase()
  let bytes: number
  if (unit === '') {
    const bare = name.startsWith('PBS') && Number.isInteger(amount) && amount >= PBS_BYTES_THRESHOLD
    bytes = bare ? amount : amount * KIB ** 2
  } else if (unit in UNITS) {
    bytes = amount * UNITS[unit]
  } else {
    throw malformed(name, value, allowed)
  }
  return Math.floor(bytes)
}

/** A CPU-count variable: a positive integer. */
export function parseBatchCpus(name: string, value: string): number {
  const s = value.trim()
  // SLURM may write "4(x2)" for heterogeneous nodes; only the plain integer form names this node's share.
  if (!/^\d+$/.test(s) || Number(s) < 1) throw malformed(name, value, 'a positive integer number of CPUs')
  return Number(s)
}

function present(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]
  return v !== undefined && v.trim() !== '' ? v : undefined
}

/**
 * Limits the batch system puts on this job. Malformed variables are collected and thrown as one
 * ConfigError naming each, rather than silently sizing from the wrong number.
 * `fallbackCpus` multiplies SLURM_MEM_PER_CPU when SLURM_CPUS_ON_NODE is absent.
 */
export function batchLimits(env: NodeJS.ProcessEnv, fallbackCpus = 1): Pick<ResourceLimits, 'pbsMemoryBytes' | 'pbsCpus' | 'slurmMemoryBytes' | 'slurmCpus'> {
  const problems: ConfigProblem[] = []
  const attempt = <T>(fn: () => T): T | undefined => {
    try {
      return fn()
    } catch (err) {
      if (err instanceof ConfigError) problems.push(...err.problems)
      else throw err
      return undefined
    }
  }
  const min = (xs: (number | undefined)[]) => {
    const ok = xs.filter((x): x is number => x !== undefined)
    return ok.length ? Math.min(...ok) : undefined
  }
  const out: ReturnType<typeof batchLimits> = {}

  // PBS Pro also sets NCPUS, but that name is too generic to trust outside a PBS job.
  const pbsCpuVar = present(env, 'PBS_NCPUS') ? 'PBS_NCPUS' : present(env, 'PBS_JOBID') && present(env, 'NCPUS') ? 'NCPUS' : undefined
  if (pbsCpuVar) out.pbsCpus = attempt(() => parseBatchCpus(pbsCpuVar, env[pbsCpuVar]!))
  out.pbsMemoryBytes = min(['PBS_MEM', 'PBS_VMEM'].map((n) => (present(env, n) ? attempt(() => parseBatchMemory(n, env[n]!)) : undefined)))

  const slurmCpus = present(env, 'SLURM_CPUS_ON_NODE') ? attempt(() => parseBatchCpus('SLURM_CPUS_ON_NODE', env.SLURM_CPUS_ON_NODE!)) : undefined
  out.slurmCpus = slurmCpus
  if (present(env, 'SLURM_MEM_PER_NODE')) {
    const bytes = attempt(() => parseBatchMemory('SLURM_MEM_PER_NODE', env.SLURM_MEM_PER_NODE!))
    // --mem=0 asks for all the memory of the node: no bound beyond the node's own.
    if (bytes !== 0) out.slurmMemoryBytes = bytes
  } else if (present(env, 'SLURM_MEM_PER_CPU')) {
    const perCpu = attempt(() => parseBatchMemory('SLURM_MEM_PER_CPU', env.SLURM_MEM_PER_CPU!))
    if (perCpu !== undefined && perCpu > 0) out.slurmMemoryBytes = perCpu * (slurmCpus ?? fallbackCpus)
  }
  if (problems.length) throw new ConfigError(problems, 'batch-system environment')
  for (const k of Object.keys(out) as (keyof typeof out)[]) if (out[k] === undefined) delete out[k]
  return out
}

/** The HPC variables the recipe's analysis lists, as found in `env`. */
export function hpcVarsOf(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of Object.keys(HPC_VARS)) {
    const v = present(env, name)
    if (v !== undefined) out[name] = v
  }
  return out
}

// On ties the more specific explanation is reported: a PBS job's cgroup usually equals PBS_MEM.
const TIE_ORDER: ResourceSource[] = ['slurm', 'pbs', 'cgroup', 'system']

function smallest(candidates: [ResourceSource, number | undefined][]): [ResourceSource, number] {
  let best: [ResourceSource, number] | undefined
  for (const source of TIE_ORDER) {
    const value = candidates.find(([s]) => s === source)?.[1]
    if (value === undefined || !(value > 0)) continue
    if (!best || value < best[1]) best = [source, value]
  }
  return best!
}

/** Pure: what this process may use, given the machine, its cgroup and the batch environment. */
export function resolveResources(system: SystemSnapshot, cgroup: CgroupLimits, env: NodeJS.ProcessEnv): Resources {
  const cgroupCores = cgroup.cpus !== undefined ? Math.max(1, Math.floor(cgroup.cpus)) : undefined
  const baseCores = Math.min(system.logicalCores, cgroupCores ?? Infinity)
  const batch = batchLimits(env, baseCores)
  const limits: ResourceLimits = {}
  if (cgroup.memoryBytes !== undefined) limits.cgroupMemoryBytes = cgroup.memoryBytes
  if (cgroup.cpus !== undefined) limits.cgroupCpus = cgroup.cpus
  Object.assign(limits, batch)

  const [memorySource, memoryBytes] = smallest([
    ['system', system.totalMemoryBytes],
    ['cgroup', limits.cgroupMemoryBytes],
    ['pbs', limits.pbsMemoryBytes],
    ['slurm', limits.slurmMemoryBytes],
  ])
  const [coresSource, cores] = smallest([
    ['system', system.logicalCores],
    ['cgroup', cgroupCores],
    ['pbs', limits.pbsCpus],
    ['slurm', limits.slurmCpus],
  ])
  return {
    ...system,
    cores,
    memoryBytes,
    source: { memory: memorySource, cores: coresSource },
    limits,
    hpcVars: hpcVarsOf(env),
  }
}

// cgroup v1 writes "no limit" as a page-rounded 2^63-1; anything this large is not a real limit.
const UNLIMITED_BYTES = 2 ** 60

export function parseMemoryLimit(text: string): number | undefined {
  const s = text.trim()
  if (s === '' || s === 'max' || s === '-1') return undefined
  const n = Number(s)
  return Number.isFinite(n) && n > 0 && n < UNLIMITED_BYTES ? n : undefined
}

/** cpu.max ("200000 100000" or "max 100000") or cfs quota/period → CPUs, possibly fractional. */
export function parseCpuLimit(quota: string, period: string): number | undefined {
  const q = Number(quota.trim())
  const p = Number(period.trim())
  if (quota.trim() === 'max' || !Number.isFinite(q) || q <= 0 || !Number.isFinite(p) || p <= 0) return undefined
  return q / p
}

interface CgroupEntry {
  version: 1 | 2
  controllers: string[]
  path: string
}

export function parseProcCgroup(text: string): CgroupEntry[] {
  const entries: CgroupEntry[] = []
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim())
    if (!m) continue
    if (m[1] === '0' && m[2] === '') entries.push({ version: 2, controllers: [], path: m[3] })
    else entries.push({ version: 1, controllers: m[2].split(','), path: m[3] })
  }
  return entries
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch {
    return undefined
  }
}

// A limit on any ancestor binds the process too, so every level up to the root is read.
function ancestry(dir: string, path: string): string[] {
  const parts = path.split('/').filter(Boolean)
  const dirs: string[] = []
  for (let i = parts.length; i >= 0; i--) dirs.push(join(dir, ...parts.slice(0, i)))
  return dirs
}

async function minOver(dirs: string[], read: (dir: string) => Promise<number | undefined>): Promise<number | undefined> {
  let best: number | undefined
  for (const d of dirs) {
    const v = await read(d)
    if (v !== undefined && (best === undefined || v < best)) best = v
  }
  return best
}

/**
 * Memory and CPU limits of this process's cgroup (v1 or v2). Inside a container the cgroup path
 * in /proc/self/cgroup may not exist under the mounted hierarchy (cgroup namespaces); then the
 * hierarchy root itself is the process's cgroup.
 */
export async function readCgroupLimits(opts: { cgroupRoot?: string; procCgroupFile?: string } = {}): Promise<CgroupLimits> {
  const root = opts.cgroupRoot ?? '/sys/fs/cgroup'
  const procText = await readText(opts.procCgroupFile ?? '/proc/self/cgroup')
  if (procText === undefined) return {}
  const entries = parseProcCgroup(procText)
  const out: CgroupLimits = {}
  const take = (k: keyof CgroupLimits, v: number | undefined) => {
    if (v !== undefined && (out[k] === undefined || v < out[k]!)) out[k] = v
  }

  const dirsFor = async (mount: string, path: string) => {
    const own = join(mount, path)
    return (await readText(join(own, 'cgroup.procs'))) !== undefined ? ancestry(mount, path) : [mount]
  }

  for (const e of entries) {
    if (e.version === 2) {
      for (const mount of [root, join(root, 'unified')]) {
        const dirs = await dirsFor(mount, e.path)
        take('memoryBytes', await minOver(dirs, async (d) => parseMemoryLimit((await readText(join(d, 'memory.max'))) ?? '')))
        take('cpus', await minOver(dirs, async (d) => {
          const [q, p] = ((await readText(join(d, 'cpu.max'))) ?? '').trim().split(/\s+/)
          return q === undefined || p === undefined ? undefined : parseCpuLimit(q, p)
        }))
      }
    } else if (e.controllers.includes('memory')) {
      const dirs = await dirsFor(join(root, 'memory'), e.path)
      take('memoryBytes', await minOver(dirs, async (d) => parseMemoryLimit((await readText(join(d, 'memory.limit_in_bytes'))) ?? '')))
    } else if (e.controllers.includes('cpu')) {
      // v1 mounts cpu either alone or co-mounted as "cpu,cpuacct".
      for (const name of [e.controllers.join(','), 'cpu', 'cpu,cpuacct']) {
        const dirs = await dirsFor(join(root, name), e.path)
        take('cpus', await minOver(dirs, async (d) => {
          const q = await readText(join(d, 'cpu.cfs_quota_us'))
          const p = await readText(join(d, 'cpu.cfs_period_us'))
          return q === undefined || p === undefined ? undefined : parseCpuLimit(q, p)
        }))
      }
    }
  }
  return out
}

/** The machine as systeminformation reports it; cores also respect the CPU affinity mask. */
export async function systemSnapshot(): Promise<SystemSnapshot> {
  const [mem, cpu] = await Promise.all([si.mem(), si.cpu()])
  const logical = Math.max(1, Math.min(cpu.cores || Infinity, availableParallelism()))
  // psutil's "used" (the recipe's figure) is what is not available, not total − free.
  const used = Math.max(0, mem.total - mem.available)
  return {
    totalMemoryBytes: mem.total,
    availableMemoryBytes: mem.available,
    usedMemoryBytes: used,
    freeMemoryBytes: mem.free,
    swapTotalBytes: mem.swaptotal,
    swapUsedBytes: mem.swapused,
    swapFreeBytes: mem.swapfree,
    physicalCores: Math.max(1, Math.min(cpu.physicalCores || logical, logical)),
    logicalCores: logical,
  }
}

/** Cores and memory this process may use: the machine, bounded by its cgroup and batch job. */
export async function detectResources(opts: { env?: NodeJS.ProcessEnv; cgroupRoot?: string; procCgroupFile?: string } = {}): Promise<Resources> {
  const [system, cgroup] = await Promise.all([systemSnapshot(), readCgroupLimits(opts)])
  return resolveResources(system, cgroup, opts.env ?? process.env)
}
