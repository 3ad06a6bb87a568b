// Where spillway's own messages go. Nothing goes to stdout: a program whose
// stdout is its output (a CLI in a pipe) stays clean. The default writes to
// stderr; a `logger` option takes any object of the pino/console shape
// (info, warn, error, debug), so messages join the program's own logs.
// Detail for debugging goes through util.debuglog: NODE_DEBUG=spillway.

import { debuglog, format } from 'node:util'
import { ConfigError } from './errors'

/** The shape of `console` and of a pino logger: one method per level. */
export interface Logger {
  info(message: string, ...rest: unknown[]): void
  warn(message: string, ...rest: unknown[]): void
  error(message: string, ...rest: unknown[]): void
  debug(message: string, ...rest: unknown[]): void
}

export type LogLevel = keyof Logger

export const LOG_LEVELS: readonly LogLevel[] = ['info', 'warn', 'error', 'debug']

/** Detail for NODE_DEBUG=spillway (written to stderr by Node, as `SPILLWAY <pid>: ...`). */
export const debug = debuglog('spillway')

/** `[spillway] warn: …`; info lines go without the level, and a message that names spillway already is not named twice. */
function stderrLine(level: LogLevel) {
  const tag = level === 'info' ? '[spillway] ' : `[spillway] ${level}: `
  return (message: string, ...rest: unknown[]) => {
    const text = format(message, ...rest)
    process.stderr.write(`${level === 'info' && text.startsWith('[spillway]') ? '' : tag}${text}\n`)
  }
}

/** The default: info, warn and error on stderr; debug through NODE_DEBUG=spillway. */
export const stderrLogger: Logger = {
  info: stderrLine('info'),
  warn: stderrLine('warn'),
  error: stderrLine('error'),
  debug: (message, ...rest) => debug(message, ...rest),
}

/** A logger that drops everything but debug detail (silenceLogs). */
export const silentLogger: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
  debug: (message, ...rest) => debug(message, ...rest),
}

/** Whether `v` has the four methods; the caller names the option. */
export function isLogger(v: unknown): v is Logger {
  return typeof v === 'object' && v !== null && LOG_LEVELS.every((l) => typeof (v as Record<string, unknown>)[l] === 'function')
}

/**
 * The logger option checked: undefined gives the default (stderr). `silence`
 * (silenceLogs) drops info, warn and error whatever the logger, so a quiet
 * program stays quiet; debug detail still goes to the logger's debug.
 */
export function resolveLogger(given: unknown, silence = false, field = 'logger'): Logger {
  if (given !== undefined && given !== null && !isLogger(given)) {
    const missing = LOG_LEVELS.filter((l) => typeof (given as Record<string, unknown> | null)?.[l] !== 'function')
    throw new ConfigError([{ field, value: given, allowed: `an object with info, warn, error and debug methods (as console or a pino logger); missing: ${missing.join(', ')}` }])
  }
  const logger = given === undefined || given === null ? stderrLogger : guarded(given as Logger, field)
  if (!silence) return logger
  return logger === stderrLogger ? silentLogger : { ...silentLogger, debug: (m, ...rest) => logger.debug(m, ...rest) }
}

/**
 * A user's logger whose failures cannot fail spillway: a method that throws
 * (or returns a promise that rejects) is reported once on stderr, with the
 * error, and its later failures are dropped; messages keep going to it.
 * Logging is never the reason a cluster does not start or a task fails.
 */
function guarded(given: Logger, field: string): Logger {
  let reported = false
  const failed = (level: LogLevel, e: unknown) => {
    if (reported) return
    reported = true
    process.stderr.write(`[spillway] warn: ${field}.${level} threw (${e instanceof Error ? e.message : String(e)}); spillway ignores its logger's failures and goes on (reported once)\n`)
  }
  const call =
    (level: LogLevel) =>
    (message: string, ...rest: unknown[]) => {
      try {
        const r = (given[level] as (...args: unknown[]) => unknown).call(given, message, ...rest)
        if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') (r as PromiseLike<unknown>).then(undefined, (e) => failed(level, e))
      } catch (e) {
        failed(level, e)
      }
    }
  return { info: call('info'), warn: call('warn'), error: call('error'), debug: call('debug') }
}

/** A logger as the older (level, message) callbacks inside spillway take it. */
export function levelLog(logger: Logger): (level: string, message: string) => void {
  return (level, message) => {
    const l = (LOG_LEVELS as readonly string[]).includes(level) ? (level as LogLevel) : 'info'
    logger[l](message)
  }
}
