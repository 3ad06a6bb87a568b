/** Every code a SpillwayError can carry (the binding's included): stable across releases. */
export const ERROR_CODES = [
  'ERR_SPILLWAY_ASYNC_STEP',
  'ERR_SPILLWAY_AUTH',
  'ERR_SPILLWAY_CANCELLED',
  'ERR_SPILLWAY_CHUNK_LOST',
  'ERR_SPILLWAY_CLOSED',
  'ERR_SPILLWAY_CODEC',
  'ERR_SPILLWAY_COLUMN_NOT_FOUND',
  'ERR_SPILLWAY_CORRUPT_FRAME',
  'ERR_SPILLWAY_CORRUPT_VALUE',
  'ERR_SPILLWAY_CYCLE',
  'ERR_SPILLWAY_DASHBOARD_LISTEN',
  'ERR_SPILLWAY_DECODE',
  'ERR_SPILLWAY_EMPTY',
  'ERR_SPILLWAY_EXPORT_NOT_FOUND',
  'ERR_SPILLWAY_FRAME',
  'ERR_SPILLWAY_GRAPH_TOO_LARGE',
  'ERR_SPILLWAY_GROUP_TOO_LARGE',
  'ERR_SPILLWAY_INSUFFICIENT_MEMORY',
  'ERR_SPILLWAY_INVALID_ARGUMENT',
  'ERR_SPILLWAY_INVALID_CONFIG',
  'ERR_SPILLWAY_INVALID_LEVEL',
  'ERR_SPILLWAY_IO',
  'ERR_SPILLWAY_JOB_SUBMIT',
  'ERR_SPILLWAY_KILLED_WORKER',
  'ERR_SPILLWAY_MISSING_DEP',
  'ERR_SPILLWAY_MIXED_NUMBERS',
  'ERR_SPILLWAY_MODULE_LOAD',
  'ERR_SPILLWAY_MODULE_NOT_FOUND',
  'ERR_SPILLWAY_NATIVE_BINDING',
  'ERR_SPILLWAY_NOT_PERSISTED',
  'ERR_SPILLWAY_NO_FILES',
  'ERR_SPILLWAY_NO_SCHEDULER',
  'ERR_SPILLWAY_NO_TASK',
  'ERR_SPILLWAY_NO_WORKER',
  'ERR_SPILLWAY_PROTOCOL',
  'ERR_SPILLWAY_READ',
  'ERR_SPILLWAY_RELEASED',
  'ERR_SPILLWAY_RETIRE_FAILED',
  'ERR_SPILLWAY_ROUNDTRIP',
  'ERR_SPILLWAY_SPILL_FULL',
  'ERR_SPILLWAY_TASK',
  'ERR_SPILLWAY_TIMEOUT',
  'ERR_SPILLWAY_TOO_LARGE',
  'ERR_SPILLWAY_TRANSFER',
  'ERR_SPILLWAY_TYPESCRIPT',
  'ERR_SPILLWAY_UNHASHABLE_KEY',
  'ERR_SPILLWAY_UNKNOWN_CODEC',
  'ERR_SPILLWAY_UNKNOWN_KEY',
  'ERR_SPILLWAY_UNSAFE_INTEGER',
  'ERR_SPILLWAY_UNSERIALIZABLE',
  'ERR_SPILLWAY_UNSUPPORTED_REGEX',
  'ERR_SPILLWAY_USAGE',
  'ERR_SPILLWAY_VERSION',
  'ERR_SPILLWAY_WORKER_LOST',
  'ERR_SPILLWAY_WORKER_STUCK',
  'ERR_SPILLWAY_WRITE',
] as const

export type SpillwayErrorCode = (typeof ERROR_CODES)[number]

const KNOWN = new Set<string>(ERROR_CODES)

/** Whether `code` is one of spillway's (a peer's or the binding's code is checked before it is trusted). */
export function isErrorCode(code: unknown): code is SpillwayErrorCode {
  return typeof code === 'string' && KNOWN.has(code)
}

/** Base of every error spillway throws; `code` is stable across releases. */
export class SpillwayError extends Error {
  readonly code: SpillwayErrorCode
  readonly details: Record<string, unknown>
  /** `options.cause`: the error this one wraps (a file system's, the binding's), as the standard `Error.cause`. */
  constructor(code: SpillwayErrorCode, message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options)
    this.name = 'SpillwayError'
    this.code = code
    this.details = details
  }
}

/** One bad option: the field, the value given, and what is allowed. */
export interface ConfigProblem {
  field: string
  value: unknown
  allowed: string
}

/**
 * The problem with a polling interval, if any. Below 1 ms setInterval fires
 * back to back, so a sampler would spin the event loop.
 */
export function intervalProblem(value: unknown, defaultMs: number, field = 'intervalMs'): ConfigProblem | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 1) return undefined
  return { field, value, allowed: `a finite number of milliseconds ≥ 1 (default ${defaultMs})` }
}

function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v)
  if (v === undefined) return 'undefined'
  // JSON would print NaN and Infinity as null, which is not what was given.
  if (typeof v === 'number' || typeof v === 'bigint') return Object.is(v, -0) ? '-0' : String(v)
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

function listProblems(what: string, problems: ConfigProblem[]): string {
  const lines = problems.map((p) => `  - ${p.field}: got ${show(p.value)}; allowed: ${p.allowed}`)
  return `invalid spillway ${what} (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${lines.join('\n')}`
}

export class ConfigError extends SpillwayError {
  readonly problems: ConfigProblem[]
  constructor(problems: ConfigProblem[], what = 'configuration', options?: ErrorOptions) {
    super('ERR_SPILLWAY_INVALID_CONFIG', listProblems(what, problems), { problems }, options)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

/**
 * Bad arguments to a native call, caught before napi turns them into an
 * uncoded conversion error. It carries the binding's own code, so a wrong
 * type and a wrong value of the same argument are told apart the same way.
 */
export class ArgumentError extends SpillwayError {
  readonly problems: ConfigProblem[]
  constructor(problems: ConfigProblem[], what: string) {
    super('ERR_SPILLWAY_INVALID_ARGUMENT', listProblems(what, problems), { problems })
    this.name = 'ArgumentError'
    this.problems = problems
  }
}

export class InsufficientMemoryError extends SpillwayError {
  constructor(message: string, details: Record<string, unknown>) {
    super('ERR_SPILLWAY_INSUFFICIENT_MEMORY', message, details)
    this.name = 'InsufficientMemoryError'
  }
}

/** What is known of the task and of the last worker it killed, for KilledWorkerError's message. */
export interface KilledWorkerContext {
  /** What the task read, in words (file and byte range, shuffle output, chunk). */
  input?: string
  /** The last worker's memory limit, in bytes. */
  memoryLimit?: number
  /** Process memory its nanny saw when it killed it (past the terminate threshold). */
  killedAtRss?: number
  /** The terminate fraction it was killed past. */
  terminate?: number
  /** Process memory in its last heartbeat (any death, a kill from outside included). */
  lastRss?: number
}

const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB`

function memoryWords(c: KilledWorkerContext, reason: string | undefined): string {
  if (!c.memoryLimit) return ''
  if (c.killedAtRss !== undefined) {
    return `: its nanny killed the last one at ${gib(c.killedAtRss)} of process memory, past ${Math.round((c.terminate ?? 1) * 100)}% of its ${gib(c.memoryLimit)} limit`
  }
  const how = reason?.startsWith('killed by') ? `the last one was ${reason}, not by its nanny (the kernel's OOM killer or another process)` : `the last one was lost (${reason ?? 'no reason given'})`
  return `: ${how}; its last heartbeat reported ${c.lastRss !== undefined ? gib(c.lastRss) : 'no figure'} of its ${gib(c.memoryLimit)} limit`
}

/** A task whose run killed too many workers (Dask's KilledWorker). */
export class KilledWorkerError extends SpillwayError {
  readonly key: string
  constructor(key: string, attempts: number, lastWorker?: string, reason?: string, context: KilledWorkerContext = {}) {
    // A worker that exited by itself (a task calling process.exit, an uncaught
    // error in a callback) says nothing about memory; only a kill may.
    const exited = reason?.match(/^exited with code (-?\d+)/)
    const read = context.input ? `; the task read ${context.input}` : ''
    super(
      'ERR_SPILLWAY_KILLED_WORKER',
      `task ${JSON.stringify(key)} was running on ${attempts} workers that died` +
        (lastWorker ? ` (last: ${lastWorker})` : '') +
        (exited
          ? `: the worker exited with code ${exited[1]} while running ${JSON.stringify(key)}${read}; a task must not end its worker's process (process.exit) nor leave an error uncaught`
          : `${memoryWords(context, reason)}${read}; it probably needs more memory than a worker has: give it less to hold at once (smaller blocks, chunks or groups, more partitions), workers with more memory each, or a higher memoryTerminate`),
      { key, attempts, lastWorker, reason, ...context },
    )
    this.name = 'KilledWorkerError'
    this.key = key
  }
}

/**
 * Work that cannot proceed because every worker it may run on is stuck:
 * paused and unable to spill (ERR_SPILLWAY_SPILL_FULL when the spill disk is
 * full, ERR_SPILLWAY_WORKER_STUCK otherwise). `details.workers` holds each
 * stuck worker's report (spill directory, free bytes, bytes waiting to be
 * written, reason).
 */
export class WorkerStuckError extends SpillwayError {
  constructor(code: 'ERR_SPILLWAY_SPILL_FULL' | 'ERR_SPILLWAY_WORKER_STUCK', message: string, details: Record<string, unknown>) {
    super(code, message, details)
    this.name = 'WorkerStuckError'
  }
}

/**
 * Work restricted (`workers: [...]`) to workers none of which is alive or
 * restarting. A name follows a worker across its nanny's restarts; an
 * address names one incarnation only, so a restriction by the address of a
 * worker that died can never be met again (as in Dask).
 */
export class NoAllowedWorkerError extends SpillwayError {
  constructor(key: string, allowed: string[], live: string[]) {
    super(
      'ERR_SPILLWAY_NO_WORKER',
      `${JSON.stringify(key)} may only run on ${allowed.map((a) => JSON.stringify(a)).join(', ')}, and no such worker is alive or restarting ` +
        '(a restarted worker keeps its name but gets a new address: restrict by name to follow it)',
      { key, workers: allowed, live },
    )
    this.name = 'NoAllowedWorkerError'
  }
}

export class ClusterClosedError extends SpillwayError {
  constructor(what = 'cluster') {
    super('ERR_SPILLWAY_CLOSED', `the ${what} is closed`)
    this.name = 'ClusterClosedError'
  }
}

const NATIVE = /^\[(ERR_SPILLWAY_[A-Z_]+)\] ([\s\S]*)$/

/** Turns an error thrown by the binding into a SpillwayError. */
export function fromNative(err: unknown): unknown {
  if (err instanceof SpillwayError || !(err instanceof Error)) return err
  const m = NATIVE.exec(err.message)
  if (!m || !isErrorCode(m[1])) return err
  const e = new SpillwayError(m[1], m[2], {}, { cause: err })
  e.stack = err.stack
  return e
}

export async function callNative<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    throw fromNative(err)
  }
}

export function callNativeSync<T>(fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    throw fromNative(err)
  }
}

// On a global symbol, as the task context is: a task module's own copy of spillway marks errors the worker's copy reads.
const ownTaskErrors: WeakSet<object> = ((globalThis as Record<symbol, unknown>)[Symbol.for('spillway.ownTaskErrors')] ??= new WeakSet<object>()) as WeakSet<object>

/**
 * An error spillway's own code raises inside a task (a bag reader that
 * cannot read its file): marked, so its code reaches the caller as it is,
 * while a user's error is always ERR_SPILLWAY_TASK whatever code it carries.
 */
export function ownTaskError(code: SpillwayErrorCode, message: string, details: Record<string, unknown> = {}, options?: ErrorOptions): SpillwayError {
  const e = new SpillwayError(code, message, details, options)
  ownTaskErrors.add(e)
  return e
}

export function isOwnTaskError(e: unknown): e is SpillwayError {
  return typeof e === 'object' && e !== null && ownTaskErrors.has(e)
}
