// The scheduler's door for workers started elsewhere (`spillway worker` on
// another node or rank): a TCP listener, loopback unless asked otherwise.
// A connection proves it holds the cluster's secret before any of its bytes
// is decoded, then says hello; a worker of another spillway version is
// refused with a message saying so, and a stranger is logged and dropped —
// neither can disturb the scheduler.

import type { Server, Socket } from 'node:net'
import { listen, type TlsFiles } from '../../comm/address'
import { acceptHandshake } from '../../comm/handshake'
import { SocketTransport } from '../../comm/socket-transport'
import type { SchedulerToWorker, WorkerStart, WorkerToScheduler } from '../../wire/protocol'
import { WorkerRpc } from '../../comm/rpc'
import type { Scheduler } from '../../scheduler/scheduler'
import { WorkerHandle } from '../../scheduler/state'
import { VERSION } from '../../base/version'
import { checkHello, type Hello, type Welcome } from '../../comm/hello'
import { Admission, type AdmissionLimits } from '../../comm/admission'
import { SummaryLog } from '../../base/log-summary'
import { MAX_HELLO_BYTES, MAX_WORKER_MESSAGE_BYTES } from '../../wire/validate'

import { workerStart, type ClusterSettings } from '../worker-settings'

export interface ListenerOptions {
  /** tcp://host:port (or tls://host:port, with `tls`) to listen on; port 0 picks one. */
  address: string
  tls?: TlsFiles
  secret: Buffer
  settings: ClusterSettings
  log?: (level: string, message: string) => void
  /** Where links closed for a malformed message are counted and logged. */
  malformed?: SummaryLog
  /** Bounds on handshakes in progress (default DEFAULT_ADMISSION). */
  admission?: AdmissionLimits
}

const HELLO_TIMEOUT_MS = 10_000

/** How often each side hears from the other at least: a few times per TTL. */
export function pingOf(ttlMs: number): number {
  return Math.max(100, Math.min(30_000, Math.floor(ttlMs / 4)))
}

export class RemoteWorkers {
  readonly #sockets = new Set<Socket>()
  /** Connections refused (bad secret, other version, malformed hello, over a cap). */
  refused = 0
  /** One line per reason and interval, however many connections a flood makes. */
  readonly refusals: SummaryLog
  readonly #admission: Admission
  /** Dropped by the admission caps: their failing handshake is not a second refusal. */
  readonly #dropped = new WeakSet<Socket>()

  private constructor(
    private readonly scheduler: Scheduler,
    private readonly opts: ListenerOptions,
    private readonly server: Server,
    /** The address actually bound. */
    readonly address: string,
  ) {
    this.refusals = new SummaryLog(opts.log, 'worker connections refused')
    this.#admission = new Admission(opts.admission, (socket, reason) => {
      this.#dropped.add(socket)
      this.#count(socket, reason)
    })
  }

  /** Handshakes in progress now. */
  get pendingHandshakes(): number {
    return this.#admission.pending
  }

  static async start(scheduler: Scheduler, opts: ListenerOptions): Promise<RemoteWorkers> {
    let self: RemoteWorkers | undefined
    const pending: Socket[] = []
    const { server, address } = await listen(opts.address, (s) => (self ? self.#accept(s) : pending.push(s)), opts.tls)
    self = new RemoteWorkers(scheduler, opts, server, address)
    // A peer that fails the TLS handshake (no certificate, another CA, plain TCP) never reaches #accept.
    server.on('tlsClientError', (e: Error, s: Socket) => self!.#count(s, `TLS: ${e.message}`))
    for (const s of pending) self.#accept(s)
    return self
  }

  #count(socket: Socket, why: string): void {
    this.refused++
    this.refusals.report(why, `refused a worker connection from ${socket.remoteAddress}:${socket.remotePort}: ${why}`)
  }

  /** `reason`: `why` without what the peer chose (a hello's values), to group refusals by. */
  #refuse(socket: Socket, why: string, reason = why): void {
    if (!this.#dropped.has(socket)) {
      this.refused++
      this.refusals.report(reason, `refused a worker connection from ${socket.remoteAddress}:${socket.remotePort}: ${why}`)
    }
    socket.destroy()
  }

  async #accept(socket: Socket): Promise<void> {
    socket.on('error', () => socket.destroy())
    if (!this.#admission.admit(socket)) return
    this.#sockets.add(socket)
    socket.once('close', () => {
      this.#sockets.delete(socket)
      this.#admission.done(socket)
    })
    let rest: Buffer
    try {
      rest = await acceptHandshake(socket, this.opts.secret)
    } catch (e: any) {
      return this.#refuse(socket, e.message)
    } finally {
      this.#admission.done(socket)
    }
    // Before its hello is taken, a peer can send no more than a hello can be.
    const transport = new SocketTransport<WorkerToScheduler | Hello, SchedulerToWorker | Welcome>(socket, rest, MAX_HELLO_BYTES)
    let hello: Hello
    try {
      hello = checkHello(await transport.next(HELLO_TIMEOUT_MS))
    } catch (e: any) {
      return this.#refuse(socket, e.message, e.details?.field ? `a hello with a bad ${e.details.field}` : e.message)
    }
    transport.limitFrames(MAX_WORKER_MESSAGE_BYTES)
    const refuse = (code: string, reason: string) => {
      transport.send({ kind: 'refused', code, reason })
      transport.close()
      this.refused++
      this.refusals.report(code, `refused worker ${hello.name} on ${hello.host}: ${reason}`)
    }
    if (hello.version !== VERSION) {
      return refuse('ERR_SPILLWAY_VERSION', `it runs spillway ${hello.version} and the scheduler ${VERSION}: install the same version on every node`)
    }
    if (this.scheduler.closed) return refuse('ERR_SPILLWAY_CLOSED', 'the cluster is closing')
    await this.#join(hello, transport as unknown as SocketTransport<WorkerToScheduler, SchedulerToWorker>)
  }

  async #join(hello: Hello, transport: SocketTransport<WorkerToScheduler, SchedulerToWorker>): Promise<void> {
    const label = `${hello.host}/${hello.name}`
    const s = this.opts.settings
    let handle: WorkerHandle | undefined
    const ttlMs = this.opts.settings.workerTtlMs
    ;(transport as unknown as SocketTransport<unknown, Welcome>).send({ kind: 'welcome', address: label, pingMs: pingOf(ttlMs), ttlMs })
    this.#watch(transport, () => handle?.address ?? label)
    const rpc = new WorkerRpc(label, transport, {
      heartbeat: (m) => handle && this.scheduler.onHeartbeat(handle, m),
      log: (level, message) => this.opts.log?.(level, `${handle?.address ?? label}: ${message}`),
      closed: () => handle && this.scheduler.removeWorker(handle, 'its connection closed'),
      retire: (reason) => handle && this.scheduler.retireAsked(handle, reason),
      invalid: (e) => this.opts.malformed?.report(String(e.details.field).replace(/\[\d+\]/g, '[]'), `closed the connection of worker ${label}: it sent a malformed message: ${e.message}`),
    })
    const config = workerStart(s, this.scheduler.thresholds, this.opts.secret.toString('hex'), {
      // Known by its data address, bound only once it starts.
      address: '',
      name: hello.name,
      nthreads: hello.nthreads,
      memoryLimit: hello.memoryLimit,
      spillDir: hello.spillDir,
      dataAddress: hello.dataAddress,
    })
    try {
      const started = await rpc.request<{ pid: number; dataAddress: string }>({ op: 'start', config })
      handle = new WorkerHandle(started.dataAddress, hello.name, hello.nthreads, hello.memoryLimit, rpc)
      handle.pid = started.pid
      handle.host = hello.host
      if (typeof hello.jobId === 'string') handle.jobId = hello.jobId
      handle.dataAddress = started.dataAddress
      // Its nanny is on another node: dropping the connection ends this
      // incarnation here (what it held is made again); the process exits
      // once its event loop sees the close, and its nanny starts the next.
      // Retired: its exit code tells its nanny not to start it again.
      handle.close = () => rpc.request({ op: 'close', retired: true }).then(() => {}, () => {})
      handle.restart = (why) => {
        this.opts.log?.('warn', `${started.dataAddress} (${label}): ${why}`)
        transport.destroy()
      }
    } catch (e: any) {
      this.refusals.report('failed to start', `worker ${label} failed to start: ${e.message}`)
      transport.close()
      return
    }
    if (this.scheduler.closed || rpc.closed) return transport.close()
    this.opts.log?.('info', `worker ${handle.address} (${label}) joined`)
    this.scheduler.addWorker(handle)
  }

  /**
   * A cut link gives no reset, so the socket alone would wait for ever:
   * silence past the TTL closes it, and the scheduler handles the worker
   * as dead (what it held is made again elsewhere).
   */
  #watch(transport: SocketTransport<WorkerToScheduler, SchedulerToWorker>, name: () => string): void {
    const ttl = this.opts.settings.workerTtlMs
    let seen = Date.now()
    transport.onMessage(() => (seen = Date.now()))
    const ping = setInterval(() => transport.send({ kind: 'request', id: 0, request: { op: 'ping' } }), pingOf(ttl))
    ping.unref()
    transport.onClose(() => clearInterval(ping))
    const timer = setInterval(() => {
      if (Date.now() - seen <= ttl) return
      this.opts.log?.('warn', `worker ${name()} sent nothing for ${Math.round((Date.now() - seen) / 1000)} s: taken as lost`)
      transport.destroy()
    }, Math.max(100, ttl / 4))
    timer.unref()
    transport.onClose(() => clearInterval(timer))
  }

  /** Takes no new connections; those joined stay. */
  stopAccepting(): void {
    this.server.close()
  }

  close(): void {
    this.server.close()
    for (const s of this.#sockets) s.destroy()
    this.refusals.flush()
  }
}
