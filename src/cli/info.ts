import { join } from 'node:path'
import { SetupConfig, type SetupOptions } from '../config/config'
import { SpillwayError } from '../base/errors'
import { detectResources, HPC_VARS, type Resources } from '../config/resources'
import { computeMemorySpec, formatSummary, GIB, type MemorySpec } from '../config/sizing'
import { resolveSpillBase, type SpillBase } from '../config/tempdir'
import { camelToKebab, describeFlags, parseArgs, SETUP_FLAGS, type FlagSpec } from './args'

const INFO_FLAGS: FlagSpec = { json: 'boolean', ...SETUP_FLAGS }

/** What setupClient would do with one configuration on this machine. */
export interface Plan {
  /** The resolved options (toJSON of the SetupConfig). */
  options: SetupOptions
  memorySpec?: MemorySpec
  /** Why no cluster could start with these options (e.g. ERR_SPILLWAY_INSUFFICIENT_MEMORY). */
  error?: { code: string; message: string }
  /** The configuration summary setupClient would print. */
  summary?: string
  /** Where it would spill; nothing is created. */
  spill: SpillBase
}

export interface InfoReport {
  resources: Resources
  default: Plan
  /** Present when options were given on the command line. */
  requested?: Plan & { args: string[] }
}

async function plan(config: SetupConfig, resources: Resources, env: NodeJS.ProcessEnv): Promise<Plan> {
  let memorySpec: MemorySpec | undefined
  let error: Plan['error']
  try {
    memorySpec = computeMemorySpec(config, resources)
  } catch (err) {
    if (!(err instanceof SpillwayError)) throw err
    error = { code: err.code, message: err.message }
  }
  const spill = await resolveSpillBase(config, { env, expectedSpillBytes: memorySpec?.usableBytes })
  const out: Plan = { options: config.toJSON(), spill }
  if (memorySpec) {
    out.memorySpec = memorySpec
    out.summary = formatSummary(memorySpec, {
      spillDir: join(spill.base, 'spillway-XXXXXX'),
      spillCompression: config.spillCompression,
      commCompression: config.commCompression,
    })
  }
  if (error) out.error = error
  return out
}

/** Everything `spillway info` shows, for the default config and (when given) `options`. */
export async function gatherInfo(
  options?: SetupOptions & { config?: string },
  opts: { env?: NodeJS.ProcessEnv; cgroupRoot?: string; procCgroupFile?: string; args?: string[] } = {},
): Promise<InfoReport> {
  const env = opts.env ?? process.env
  // Options are validated before anything is measured: a typo is reported as such, quickly.
  let requested: SetupConfig | undefined
  if (options) {
    const { config: file, ...rest } = options
    requested = file !== undefined ? SetupConfig.fromFile(file, rest) : new SetupConfig(rest)
  }
  const resources = await detectResources({ env, cgroupRoot: opts.cgroupRoot, procCgroupFile: opts.procCgroupFile })
  const report: InfoReport = { resources, default: await plan(new SetupConfig(), resources, env) }
  if (requested) report.requested = { args: opts.args ?? [], ...(await plan(requested, resources, env)) }
  return report
}

function gb(bytes: number): string {
  return `${(bytes / GIB).toFixed(2)} GiB`
}

function pct(part: number, whole: number): string {
  return `${whole > 0 ? ((part / whole) * 100).toFixed(1) : '0.0'}%`
}

function formatPlan(title: string, p: Plan): string[] {
  const lines = [title, '-'.repeat(50)]
  if (p.summary) lines.push(p.summary)
  if (p.memorySpec?.reducedWorkers) {
    const r = p.memorySpec.reducedWorkers
    lines.push(`Fewer workers: ${r.requested} → ${p.memorySpec.nWorkers} (${r.reason})`)
  }
  if (p.error) lines.push(`Cannot start a cluster with these options (${p.error.code}):`, ...p.error.message.split('\n').map((l) => `   ${l}`))
  lines.push(`Spill base: ${p.spill.base} (from ${p.spill.baseSource}), ${gb(p.spill.freeBytes)} free`)
  if (p.spill.warning) lines.push(`Warning: ${p.spill.warning}`)
  return lines
}

/**
 * The recipe's system memory analysis (physical memory, swap, cores, HPC
 * variables), as lines; `spillway info` and `spillway demo` both print it.
 */
export function formatSystemAnalysis(r: Resources): string[] {
  const lines = [
    'SYSTEM MEMORY ANALYSIS',
    '='.repeat(50),
    'Physical Memory:',
    `   Total: ${gb(r.totalMemoryBytes)}`,
    `   Available: ${gb(r.availableMemoryBytes)}`,
    `   Used: ${gb(r.usedMemoryBytes)} (${pct(r.usedMemoryBytes, r.totalMemoryBytes)})`,
    `   Free: ${gb(r.freeMemoryBytes)}`,
    '',
    'Swap Memory:',
    `   Total: ${gb(r.swapTotalBytes)}`,
    `   Used: ${gb(r.swapUsedBytes)} (${pct(r.swapUsedBytes, r.swapTotalBytes)})`,
    `   Free: ${gb(r.swapFreeBytes)}`,
    '',
    'CPU Information:',
    `   Physical cores: ${r.physicalCores}`,
    `   Logical cores: ${r.logicalCores}`,
    '',
    'HPC ENVIRONMENT VARIABLES:',
  ]
  const vars = Object.entries(r.hpcVars)
  if (vars.length === 0) lines.push('   No HPC environment variables detected (running locally)')
  for (const [name, value] of vars) lines.push(`   ${name}: ${value} (${HPC_VARS[name] ?? ''})`)
  return lines
}

/** The report as text: the recipe's system memory analysis, then limits, then the planned sizing. */
export function formatInfo(report: InfoReport): string {
  const r = report.resources
  const lines = formatSystemAnalysis(r)
  const l = r.limits
  const mem = (v?: number) => (v === undefined ? 'none' : gb(v))
  const cpus = (v?: number) => (v === undefined ? 'none' : String(Number(v.toFixed(2))))
  lines.push(
    '',
    'LIMITS ON THIS PROCESS:',
    `   cgroup: memory ${mem(l.cgroupMemoryBytes)} | cpus ${cpus(l.cgroupCpus)}`,
    `   PBS:    memory ${mem(l.pbsMemoryBytes)} | cpus ${cpus(l.pbsCpus)}`,
    `   SLURM:  memory ${mem(l.slurmMemoryBytes)} | cpus ${cpus(l.slurmCpus)}`,
    `   Usable memory: ${gb(r.memoryBytes)} (from ${r.source.memory})`,
    `   Usable cores: ${r.cores} (from ${r.source.cores})`,
    '',
    ...formatPlan('PLANNED SIZING (default configuration)', report.default),
  )
  if (report.requested) {
    const args = report.requested.args.join(' ')
    lines.push('', ...formatPlan(`PLANNED SIZING (${args || 'given options'})`, report.requested))
  }
  return lines.join('\n')
}

function help(): string {
  return [
    'Usage: spillway info [--json] [setup options]',
    '',
    'Shows the memory and cores of this machine, the cgroup and PBS/SLURM limits that bound this',
    'process, and the workers, memory limits and spill directory setupClient would choose, for the',
    'default configuration and for the options given (e.g. --max-mem-gb 3 --reserve-mem-gb 1).',
    'Nothing is started or created.',
    '',
    'Options:',
    ...describeFlags(INFO_FLAGS),
  ].join('\n')
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, INFO_FLAGS)
  if (parsed.help) {
    process.stdout.write(help() + '\n')
    return 0
  }
  if (parsed.positionals.length) {
    process.stderr.write(`spillway info: unexpected argument ${JSON.stringify(parsed.positionals[0])}\n\n${help()}\n`)
    return 2
  }
  const { json, ...setup } = parsed.flags
  const given = Object.keys(setup).length > 0
  const args = Object.entries(setup).map(([k, v]) => (typeof v === 'boolean' ? (v ? `--${camelToKebab(k)}` : `--no-${camelToKebab(k)}`) : `--${camelToKebab(k)} ${v}`))
  const report = await gatherInfo(given ? (setup as SetupOptions & { config?: string }) : undefined, { args })
  process.stdout.write((json ? JSON.stringify(report, null, 2) : formatInfo(report)) + '\n')
  return 0
}
