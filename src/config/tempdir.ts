import { constants, rmSync } from 'node:fs'
import { access, chmod, mkdtemp, rm, stat, statfs } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import type { SetupConfig } from './config'
import { ConfigError } from '../base/errors'
import { stderrLogger, type Logger } from '../base/logger'
import { native } from '../native/binding'

export type SpillBaseSource = 'tempBaseDir' | 'PBS_JOBFS' | 'TMPDIR' | 'os'

export interface SpillBase {
  base: string
  baseSource: SpillBaseSource
  /** Free bytes on the filesystem holding `base`, as an unprivileged user sees it. */
  freeBytes: number
  warning?: string
}

export interface SpillDir extends SpillBase {
  /** The per-cluster directory, mode 0700. */
  path: string
  /** Deletes the directory and everything spilled in it; safe to call more than once. */
  remove(): Promise<void>
}

export interface SpillDirOptions {
  env?: NodeJS.ProcessEnv
  /** Bytes the workers could spill; below this much free space a warning is given. */
  expectedSpillBytes?: number
  /** Do not print the low-space warning (it is still returned). Defaults to config.silenceLogs. */
  silent?: boolean
  /** Where the warning goes (stderr unless told). */
  logger?: Logger
}

async function writableDir(dir: string): Promise<string | undefined> {
  try {
    if (!(await stat(dir)).isDirectory()) return 'it is not a directory'
    await access(dir, constants.W_OK | constants.X_OK)
    return undefined
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    return code === 'ENOENT' ? 'it does not exist' : code === 'EACCES' ? 'it is not writable by this user' : (err as Error).message
  }
}

async function freeBytesOf(dir: string): Promise<number> {
  const s = await statfs(dir)
  return s.bavail * s.bsize
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(2)} GiB`
}

/**
 * Where spill goes, without creating anything: tempBaseDir, else $PBS_JOBFS (the node's local SSD
 * on Gadi), else $TMPDIR, else the OS temp dir. An explicit tempBaseDir that cannot be used is a
 * config error; a stale environment variable just falls through to the next candidate.
 */
export async function resolveSpillBase(config: Pick<SetupConfig, 'tempBaseDir'>, opts: SpillDirOptions = {}): Promise<SpillBase> {
  const env = opts.env ?? process.env
  let chosen: { base: string; baseSource: SpillBaseSource } | undefined
  if (config.tempBaseDir !== undefined) {
    const base = resolve(config.tempBaseDir)
    const why = await writableDir(base)
    if (why) throw new ConfigError([{ field: 'tempBaseDir', value: config.tempBaseDir, allowed: `an existing directory this user can write (${why})` }])
    chosen = { base, baseSource: 'tempBaseDir' }
  } else {
    for (const name of ['PBS_JOBFS', 'TMPDIR'] as const) {
      const v = env[name]
      if (v && v.trim() !== '' && !(await writableDir(resolve(v)))) {
        chosen = { base: resolve(v), baseSource: name }
        break
      }
    }
    chosen ??= { base: tmpdir(), baseSource: 'os' }
  }
  const freeBytes = await freeBytesOf(chosen.base)
  const out: SpillBase = { ...chosen, freeBytes }
  const expected = opts.expectedSpillBytes
  if (expected !== undefined && freeBytes < expected) {
    const hint = chosen.baseSource === 'PBS_JOBFS' ? 'request more jobfs (#PBS -l jobfs=...)' : 'set tempBaseDir to a filesystem with more space'
    out.warning =
      `spill dir base ${chosen.base} (from ${chosen.baseSource}) has ${gib(freeBytes)} free, ` +
      `less than the ${gib(expected)} the workers could spill; ${hint}, or use a stronger spillCompression`
  }
  return out
}

// Directories still to be removed if the process ends without cluster.close().
const live = new Set<string>()
let hooked = false

/** The core ends the process for a signal its JavaScript listener does not get to in time: it removes these then. */
function tellCore(): void {
  native.setSignalDirs([...live])
}

function removeAllSync(): void {
  for (const dir of live) {
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // Exiting anyway; a dir that cannot be removed must not hide the process's real exit status.
    }
  }
  live.clear()
  tellCore()
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
const isStopSignal = (e: string | symbol): e is (typeof SIGNALS)[number] => (SIGNALS as readonly (string | symbol)[]).includes(e)

function onSignal(signal: NodeJS.Signals): void {
  native.signalHeard()
  // A program with its own handler decides how to shut down (perhaps closing the cluster, which
  // still needs its spill dir); the 'exit' hook cleans up after it.
  if (process.listenerCount(signal) > 1) return
  process.off(signal, onSignal)
  removeAllSync()
  // With no listener left, re-raising gives Node's default: the process dies of the signal.
  process.kill(process.pid, signal)
}

function hookExit(): void {
  if (hooked) return
  hooked = true
  process.on('exit', removeAllSync)
  // 'exit' does not run when a signal kills the process, which is how Ctrl-C or a batch job's walltime ends it.
  for (const signal of SIGNALS) {
    process.on(signal, onSignal)
    native.setSignalOwned(signal, process.listenerCount(signal) > 1)
  }
  // These listeners run on the JavaScript thread, which a long synchronous
  // step holds: the core acts for them after a grace (core signals.rs), unless
  // the program listens itself, and it is told when that changes.
  process.on('newListener', (event: string | symbol, fn: unknown) => {
    if (isStopSignal(event) && fn !== onSignal) native.setSignalOwned(event, true)
  })
  process.on('removeListener', (event: string | symbol) => {
    if (isStopSignal(event)) native.setSignalOwned(event, process.listenerCount(event) > (process.listeners(event).includes(onSignal) ? 1 : 0))
  })
  native.chainSignals()
}

const PREFIX = 'spillway-'

/**
 * Whether `path` has the name createSpillDir gives (mkdtemp's six
 * characters after the prefix): a worker orphaned by its cluster's process
 * removes only such a directory, never one a LocalCluster was handed.
 */
export function isClusterSpillDir(path: string): boolean {
  return new RegExp(`^${PREFIX}[A-Za-z0-9]{6}$`).test(basename(path))
}

/** Directories created by createSpillDir that are not removed yet (for diagnostics and tests). */
export function liveSpillDirs(): string[] {
  return [...live]
}

/**
 * A fresh per-cluster spill directory, readable only by its owner (/tmp on a login node is shared),
 * removed by `remove()` and, failing that, when the process exits.
 */
export async function createSpillDir(config: Pick<SetupConfig, 'tempBaseDir' | 'silenceLogs'>, opts: SpillDirOptions = {}): Promise<SpillDir> {
  const base = await resolveSpillBase(config, opts)
  let path: string
  try {
    path = await mkdtemp(join(base.base, PREFIX))
  } catch (err) {
    // Permission bits pass for root where the filesystem still refuses (/proc, a read-only mount).
    const where = base.baseSource === 'tempBaseDir' ? '' : ` (chosen from ${base.baseSource === 'os' ? 'the OS temp dir' : `$${base.baseSource}`}; set tempBaseDir to another)`
    throw new ConfigError([{ field: 'tempBaseDir', value: config.tempBaseDir ?? base.base, allowed: `a directory where a new directory can be made (${(err as Error).message})${where}` }], undefined, { cause: err })
  }
  // mkdtemp already uses 0700, but say it explicitly: the guarantee matters more than the default.
  await chmod(path, 0o700)
  hookExit()
  live.add(path)
  tellCore()
  if (base.warning && !(opts.silent ?? config.silenceLogs)) (opts.logger ?? stderrLogger).warn(base.warning)
  let removed = false
  return {
    ...base,
    path,
    async remove() {
      if (removed) return
      removed = true
      live.delete(path)
      tellCore()
      await rm(path, { recursive: true, force: true })
    },
  }
}
