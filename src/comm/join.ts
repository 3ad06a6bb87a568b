// A worker joining a scheduler over TCP: dial, prove it holds the secret
// (and check the scheduler does), say hello, and wait to be welcomed. The
// channel it returns carries the same messages as a local worker's IPC.

import type { Socket } from 'node:net'
import { backoff, type Backoff } from '../base/backoff'
import { isErrorCode, SpillwayError } from '../base/errors'
import { VERSION } from '../base/version'
import { dial, type TlsFiles } from './address'
import { offerHandshake } from './handshake'
import { SocketTransport } from './socket-transport'
import type { SchedulerToWorker, WorkerToScheduler } from '../wire/protocol'
import type { Hello, Welcome } from './hello'

/** How a worker process joins: set by its nanny in SPILLWAY_JOIN (JSON). */
export interface JoinSpec {
  scheduler: string
  secretFile: string
  /** For a tls:// scheduler: the CA to trust (and this worker's own certificate, where the scheduler asks for one). */
  tls?: TlsFiles
  hello: Omit<Hello, 'kind' | 'version'>
}

export const JOIN_ENV = 'SPILLWAY_JOIN'

/** Exit codes of a joining worker process, for its nanny. */
export const EXIT_REFUSED = 3
export const EXIT_UNREACHABLE = 4
/** It could not even try: no readable secret, a malformed join spec. A restart reads the same files, so its nanny stops. */
export const EXIT_CONFIG = 5
/** Retired by the scheduler (its values moved to other workers): its nanny stops. */
export const EXIT_RETIRED = 6

/**
 * Why a handshake failed for good: another wire version, a peer that is no
 * spillway endpoint, or a scheduler that said our proof is wrong. Anything
 * else (a close, a reset, silence) is what a scheduler shedding connections
 * under load looks like, and is worth another try.
 */
function lasting(e: any): boolean {
  return e?.code === 'ERR_SPILLWAY_VERSION' || e?.details?.refused === true || /not a spillway endpoint|sent data before/.test(e?.message ?? '')
}

/**
 * Dials and passes the handshake. A handshake cut short (the scheduler
 * refused the connection or dropped it under load) is tried again, each
 * wait longer and jittered, until `timeoutMs` has passed since the first
 * try; a scheduler out of reach is told to the nanny at once (it tries
 * again, reading the scheduler file afresh, until its death timeout).
 */
async function handshake(scheduler: string, secret: Buffer, timeoutMs: number, tls: TlsFiles, wait: Backoff): Promise<{ socket: Socket; rest: Buffer }> {
  const start = Date.now()
  for (;;) {
    let socket: Socket
    try {
      socket = await dial(scheduler, 10_000, tls)
    } catch (e: any) {
      if (/certificate|SSL|TLS|self.signed/i.test(e.message)) {
        throw new SpillwayError('ERR_SPILLWAY_AUTH', `the scheduler at ${scheduler} failed the TLS handshake: ${e.message} (give the workers the CA that signed its certificate: --tls-ca)`, { scheduler }, { cause: e })
      }
      throw new SpillwayError('ERR_SPILLWAY_NO_SCHEDULER', `cannot reach the scheduler at ${scheduler}: ${e.message}`, { scheduler }, { cause: e })
    }
    try {
      const left = start + timeoutMs - Date.now()
      return { socket, rest: await offerHandshake(socket, secret, Math.max(1000, Math.min(10_000, left))) }
    } catch (e: any) {
      socket.destroy()
      if (e?.details?.refused === true) {
        throw new SpillwayError('ERR_SPILLWAY_AUTH', `the scheduler at ${scheduler} refused this worker's proof of the cluster secret: this worker's secret is not the cluster's (use the FILE.secret written beside the scheduler file)`, { scheduler })
      }
      if (lasting(e)) throw e
      const pause = wait.next()
      const spent = Date.now() - start
      if (spent + pause > timeoutMs) {
        throw new SpillwayError(
          'ERR_SPILLWAY_NO_SCHEDULER',
          `the scheduler at ${scheduler} refused or dropped this worker's handshake ${wait.failures} times in ${Math.round(spent / 1000)} s (last: ${e.message}): it sheds connections it cannot take (a flood of connections, its file descriptor limit), and its log says which`,
          { scheduler, tries: wait.failures, reason: 'dropped' },
        )
      }
      await new Promise((r) => setTimeout(r, pause))
    }
  }
}

export async function joinScheduler(
  scheduler: string,
  secret: Buffer,
  hello: Omit<Hello, 'kind' | 'version'>,
  /** How long the handshake is tried again when cut, and then how long the welcome may take. */
  timeoutMs = 30_000,
  tls: TlsFiles = {},
  wait: Backoff = backoff(),
): Promise<{ transport: SocketTransport<SchedulerToWorker, WorkerToScheduler>; ttlMs: number }> {
  const { socket, rest } = await handshake(scheduler, secret, timeoutMs, tls, wait)
  const t = new SocketTransport<Welcome | SchedulerToWorker, Hello | WorkerToScheduler>(socket, rest)
  t.send({ kind: 'hello', version: VERSION, ...hello })
  const w = (await t.next(timeoutMs)) as Welcome
  if (w.kind === 'refused') {
    t.close()
    throw new SpillwayError(isErrorCode(w.code) ? w.code : 'ERR_SPILLWAY_PROTOCOL', `the scheduler at ${scheduler} refused this worker: ${w.reason}`, { scheduler })
  }
  if (w.kind !== 'welcome') {
    t.close()
    throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `the scheduler at ${scheduler} answered the hello with ${JSON.stringify((w as { kind?: unknown }).kind)}`)
  }
  return { transport: t as unknown as SocketTransport<SchedulerToWorker, WorkerToScheduler>, ttlMs: w.ttlMs }
}

/**
 * A cut link gives no reset: a joined worker that hears nothing from its
 * scheduler (which pings it) for `ttlMs` drops the connection, and exits.
 */
export function watchScheduler(transport: SocketTransport<SchedulerToWorker, WorkerToScheduler>, ttlMs: number): void {
  let seen = Date.now()
  transport.onMessage(() => (seen = Date.now()))
  const timer = setInterval(() => {
    if (Date.now() - seen > ttlMs) transport.destroy()
  }, Math.max(100, ttlMs / 4))
  timer.unref()
  transport.onClose(() => clearInterval(timer))
}
