// A worker joining a scheduler over TCP: dial, prove it holds the secret
// (and check the scheduler does), say hello, and wait to be welcomed. The
// channel it returns carries the same messages as a local worker's IPC.

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

export async function joinScheduler(
  scheduler: string,
  secret: Buffer,
  hello: Omit<Hello, 'kind' | 'version'>,
  timeoutMs = 30_000,
  tls: TlsFiles = {},
): Promise<{ transport: SocketTransport<SchedulerToWorker, WorkerToScheduler>; ttlMs: number }> {
  let socket
  try {
    socket = await dial(scheduler, 10_000, tls)
  } catch (e: any) {
    if (/certificate|SSL|TLS|self.signed/i.test(e.message)) {
      throw new SpillwayError('ERR_SPILLWAY_AUTH', `the scheduler at ${scheduler} failed the TLS handshake: ${e.message} (give the workers the CA that signed its certificate: --tls-ca)`, { scheduler })
    }
    throw new SpillwayError('ERR_SPILLWAY_NO_SCHEDULER', `cannot reach the scheduler at ${scheduler}: ${e.message}`, { scheduler })
  }
  let rest: Buffer
  try {
    rest = await offerHandshake(socket, secret)
  } catch (e: any) {
    socket.destroy()
    // The scheduler drops a peer whose proof fails without a word (it tells a stranger nothing).
    if (e.code === 'ERR_SPILLWAY_AUTH' && /closed/.test(e.message)) {
      throw new SpillwayError('ERR_SPILLWAY_AUTH', `the scheduler at ${scheduler} closed the connection during the handshake: this worker's secret is probably not the cluster's (use the FILE.secret written beside the scheduler file)`, { scheduler })
    }
    throw e
  }
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
