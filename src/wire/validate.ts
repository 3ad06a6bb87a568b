// The one boundary where a peer's messages become typed values: each kind
// (and each reply, by the request it answers) is checked for its whole
// shape before anything else reads it. A peer that holds the secret is
// still not trusted to send what it should: a `result: null` or a
// `metrics: {}` read later as numbers would throw inside the scheduler.
// Extra fields are let through (a newer worker may add some); missing or
// mistyped ones, and numbers that are not finite where they count bytes,
// are not.

import { SpillwayError } from '../base/errors'
import type { Request, TaskCall, WorkerToScheduler } from './protocol'
import { isValueFormat } from './values'
import { BUILTIN_FUNCTIONS } from './functions'
import { keyProblem } from './keys'

/**
 * The longest hello a joining worker can send (a few short strings): a
 * longer length prefix before the hello is refused before it is read.
 */
export const MAX_HELLO_BYTES = 64 * 1024

/**
 * The longest message a worker sends the scheduler. Values never come this
 * way, only keys, sizes, metrics, partials and errors; the largest is a
 * reduce-many reply of one partial per key.
 */
export const MAX_WORKER_MESSAGE_BYTES = 64 * 2 ** 20

/** A message of the wrong shape; `details.field` is the path of the first bad part. */
export class ProtocolError extends SpillwayError {
  constructor(message: string, field: string) {
    super('ERR_SPILLWAY_PROTOCOL', message, { field })
    this.name = 'ProtocolError'
  }
}

type Check = (v: unknown, at: string) => void

function brief(v: unknown): string {
  if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (typeof v === 'string') return v.length > 40 ? `a string of ${v.length} characters` : JSON.stringify(v)
  if (Array.isArray(v)) return `an array of ${v.length}`
  return typeof v
}

function bad(at: string, expected: string, v: unknown): never {
  throw new ProtocolError(`${at} is ${brief(v)}; expected ${expected}`, at)
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Bytes, counts, seconds: finite and not negative. */
const amount: Check = (v, at) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(at, 'a finite number ≥ 0', v)
}
/** A reduction's figures: NaN and ±Infinity are values a chunk can hold. */
const number: Check = (v, at) => {
  if (typeof v !== 'number') bad(at, 'a number', v)
}
const integer: Check = (v, at) => {
  if (!Number.isSafeInteger(v) || (v as number) < 0) bad(at, 'an integer ≥ 0', v)
}
const fraction: Check = (v, at) => {
  if (typeof v !== 'number' || !(v > 0 && v <= 1)) bad(at, 'a fraction in (0, 1]', v)
}
const str: Check = (v, at) => {
  if (typeof v !== 'string') bad(at, 'a string', v)
}
const bool: Check = (v, at) => {
  if (typeof v !== 'boolean') bad(at, 'a boolean', v)
}
const any: Check = () => {}
const opt =
  (c: Check): Check =>
  (v, at) =>
    v === undefined || c(v, at)
const nullable =
  (c: Check): Check =>
  (v, at) =>
    v === null || c(v, at)
const oneOf =
  (...values: string[]): Check =>
  (v, at) => {
    if (!values.includes(v as string)) bad(at, `one of ${values.join(', ')}`, v)
  }
const obj =
  (fields: Record<string, Check>): Check =>
  (v, at) => {
    if (!isObject(v)) bad(at, 'an object', v)
    for (const [f, c] of Object.entries(fields)) c(v[f], `${at}.${f}`)
  }
const arrayOf =
  (c: Check): Check =>
  (v, at) => {
    if (!Array.isArray(v)) bad(at, 'an array', v)
    for (let i = 0; i < v.length; i++) c(v[i], `${at}[${i}]`)
  }
const format: Check = (v, at) => {
  if (!isValueFormat(v)) bad(at, 'a value format (v8, arraybuffer, raw:<view>)', v)
}

/** Target and spill may be off (false), as Dask's `target: False` / `spill: False`. */
const fractionOrOff: Check = (v, at) => {
  if (v !== false) fraction(v, at)
}
const THRESHOLDS = obj({ target: fractionOrOff, spill: fractionOrOff, pause: fraction, terminate: fraction })

const STUCK = obj({
  reason: oneOf('spill-full', 'spill-failing', 'nothing-to-spill'),
  since: amount,
  spillDir: str,
  freeBytes: opt(amount),
  waitingBytes: amount,
  rss: amount,
  memoryLimit: amount,
  lastWriteError: opt(str),
})

export const checkMetrics: Check = obj({
  managedBytes: amount,
  memoryBytes: amount,
  spilledBytes: obj({ memory: amount, disk: amount }),
  memoryCount: amount,
  diskCount: amount,
  spillCount: amount,
  unspillCount: amount,
  spillBytesWritten: amount,
  spillSeconds: amount,
  unspillBytesRead: amount,
  unspillSeconds: amount,
  writeFailures: amount,
  lastWriteError: opt(str),
  lastWriteNoSpace: bool,
  consecutiveWriteFailures: amount,
  spillBackoffSeconds: amount,
  targetBytes: opt(amount),
  spillCapRefusals: amount,
  spillCapReached: bool,
  rss: amount,
  status: oneOf('running', 'paused', 'closing'),
  memoryLimit: amount,
  thresholds: THRESHOLDS,
  taskCounts: obj({ executing: amount, done: amount, failed: amount }),
  timings: obj({ taskSeconds: amount, pausedSeconds: amount }),
  transfer: obj({ incomingBytes: amount, incomingCount: amount, outgoingBytes: amount, outgoingCount: amount }),
  stuck: opt(STUCK),
  spillFreeBytes: opt(amount),
  shuffle: opt(obj({ sentBytes: amount, receivedBytes: amount, heldShards: amount })),
  time: amount,
})

const PARTIAL = obj({
  count: amount,
  sum: number,
  comp: number,
  intSum: opt((v, at) => {
    if (typeof v !== 'string' || !/^-?\d{1,64}$/.test(v)) bad(at, 'a decimal integer string', v)
  }),
  min: number,
  max: number,
  m2: number,
})

const RUN_RESULT = obj({ nbytes: amount, format: opt(format), skipped: opt(bool), metrics: opt(checkMetrics) })
const WITH_METRICS = obj({ metrics: checkMetrics })

const ERROR = obj({
  code: opt(str),
  message: str,
  remote: opt(obj({ name: str, message: str, stack: opt(str) })),
  missing: opt(arrayOf(str)),
  stuck: opt(obj({})),
})

/** What a request's reply must hold, by the request it answers. */
const RESULTS: Record<Request['op'], Check> = {
  start: obj({
    pid: (v, at) => {
      if (!Number.isSafeInteger(v) || (v as number) <= 0) bad(at, 'a process id', v)
    },
    dataAddress: str,
  }),
  run: RUN_RESULT,
  put: RUN_RESULT,
  reduce: obj({ partial: nullable(PARTIAL) }),
  'reduce-many': obj({ partials: arrayOf(nullable(PARTIAL)), unreadable: opt(arrayOf(obj({ key: str, code: str, message: str }))) }),
  release: WITH_METRICS,
  'shuffle-drop': WITH_METRICS,
  'set-thresholds': WITH_METRICS,
  metrics: WITH_METRICS,
  acquire: obj({ got: arrayOf(str), missing: arrayOf(str), refused: arrayOf(str), error: opt(str), metrics: checkMetrics }),
  call: obj({
    value: (v, at) => {
      if (!(v instanceof Uint8Array)) bad(at, 'bytes', v)
    },
    format,
  }),
  // Replies no one reads.
  cancel: any,
  steal: any,
  ping: any,
  close: any,
}

/** The request a reply answers, as far as its checks need it. */
export interface Asked {
  op: Request['op']
  /** How many keys a reduce-many asked for: one partial each. */
  keys?: number
}

/**
 * `m` as a WorkerToScheduler message, or a ProtocolError naming its first
 * bad field. `asked(id)` is the pending request a reply answers; a reply to
 * none (a ping's, a late one) is checked as far as its envelope.
 */
export function checkWorkerMessage(m: unknown, asked: (id: number) => Asked | undefined): WorkerToScheduler {
  if (!isObject(m)) bad('message', 'an object', m)
  switch (m.kind) {
    case 'heartbeat':
      checkMetrics(m.metrics, 'heartbeat.metrics')
      break
    case 'log':
      oneOf('warn', 'info')(m.level, 'log.level')
      str(m.message, 'log.message')
      break
    case 'retire':
      str(m.reason, 'retire.reason')
      break
    case 'call':
      // The call itself is checked apart (checkTaskCall): a bad one is refused, the link kept.
      integer(m.id, 'call.id')
      break
    case 'reply': {
      integer(m.id, 'reply.id')
      bool(m.ok, 'reply.ok')
      if (!m.ok) {
        ERROR(m.error, 'reply.error')
        break
      }
      const a = asked(m.id as number)
      if (!a) break
      RESULTS[a.op](m.result, `reply to ${a.op}.result`)
      if (a.op === 'reduce-many' && (m.result as { partials: unknown[] }).partials.length !== a.keys) {
        bad(`reply to reduce-many.result.partials`, `${a.keys} partials, one per key`, (m.result as { partials: unknown[] }).partials)
      }
      break
    }
    default:
      bad('message.kind', 'heartbeat, log, retire, call or reply', m.kind)
  }
  return m as unknown as WorkerToScheduler
}

const key: Check = (v, at) => {
  if (typeof v !== 'string' || v.length === 0) bad(at, 'a non-empty key', v)
  if (keyProblem(v, at)) bad(at, 'a key of whole Unicode characters', v)
}
const keys = arrayOf(key)
const finite: Check = (v, at) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) bad(at, 'a finite number', v)
}
const pathPart: Check = (v, at) => {
  if (typeof v !== 'string' && !Number.isSafeInteger(v)) bad(at, 'a property name or an index', v)
}

/** A function a task may submit: a module export, a shipped source, or a built-in by name (never one of spillway's own task kinds). */
const FUNCTION: Check = (v, at) => {
  if (!isObject(v)) bad(at, 'an object', v)
  if (v.kind === 'module') obj({ id: str, specifier: str, name: str, label: str })(v, at)
  else if (v.kind === 'source') obj({ id: str, source: str, label: str })(v, at)
  else if (v.kind === 'native') {
    obj({ id: str, op: str, label: str })(v, at)
    if (!BUILTIN_FUNCTIONS.has(v.op as string)) bad(`${at}.op`, `a built-in (${[...BUILTIN_FUNCTIONS.keys()].join(', ')})`, v.op)
  } else bad(`${at}.kind`, 'module, source or native', v.kind)
}

const SUB_TASK = obj({
  key,
  task: obj({ fn: oneOf('call'), func: FUNCTION, args: any, deps: arrayOf(obj({ key, path: arrayOf(pathPart) })) }),
  deps: keys,
  group: str,
  priority: opt(finite),
  retries: opt(integer),
  workers: opt(arrayOf(str)),
})

const CALLS: Record<TaskCall['op'], Check> = {
  submit: obj({ run: str, tasks: arrayOf(SUB_TASK), parent: opt(key) }),
  wait: obj({ run: str, keys }),
  release: obj({ run: str, keys }),
  cancel: obj({ run: str, keys }),
  secede: obj({ run: str }),
  rejoin: obj({ run: str }),
  done: obj({ run: str }),
}

/** `c` as a TaskCall (what a running task asks of the scheduler), or a ProtocolError naming its first bad field. */
export function checkTaskCall(c: unknown): TaskCall {
  if (!isObject(c)) bad('call', 'an object', c)
  if (typeof c.op !== 'string' || !Object.hasOwn(CALLS, c.op)) bad('call.op', `one of ${Object.keys(CALLS).join(', ')}`, c.op)
  CALLS[c.op as TaskCall['op']](c, `call(${c.op})`)
  return c as unknown as TaskCall
}
