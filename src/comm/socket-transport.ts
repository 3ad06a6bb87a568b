// The scheduler ↔ worker channel over a socket, once the handshake has
// proved the peer holds the cluster's secret: each message a frame of V8's
// structured-clone serialization, as the IPC channel carries them, so the
// scheduler and the worker cannot tell one transport from the other.

import type { Socket } from 'node:net'
import { deserialize, serialize } from 'node:v8'
import { SpillwayError } from '../base/errors'
import type { Transport } from './transport'
import { MAX_FRAME, readFrames, writeFrame, type FrameReader } from './frames'

export class SocketTransport<In, Out> implements Transport<In, Out> {
  #closed = false
  readonly #closeFns: Array<() => void> = []
  readonly #messageFns: Array<(msg: In) => void> = []
  // Messages that came in before anyone listened (right after the handshake).
  #early: In[] | undefined = []

  readonly #reader: FrameReader

  /**
   * `rest`: bytes that arrived with the end of the handshake. `maxFrame`:
   * the longest message taken from the peer (see `limitFrames`).
   */
  constructor(
    private readonly socket: Socket,
    rest: Buffer = Buffer.alloc(0),
    maxFrame = MAX_FRAME,
  ) {
    socket.setNoDelay(true)
    socket.setKeepAlive(true, 10_000)
    socket.once('close', () => this.#fireClose())
    socket.on('error', () => socket.destroy())
    // A malformed frame from an authenticated peer is still a broken link: readFrames drops it.
    this.#reader = readFrames(socket, rest, (frame) => this.#deliver(deserialize(frame) as In), maxFrame)
  }

  /** Caps the peer's messages from now on: a longer length prefix drops the connection before anything is held. */
  limitFrames(maxFrame: number): void {
    this.#reader.maxFrame = maxFrame
  }

  #waiter: ((msg: In) => void) | undefined

  #deliver(msg: In): void {
    if (this.#waiter) {
      const w = this.#waiter
      this.#waiter = undefined
      w(msg)
    } else if (this.#early) this.#early.push(msg)
    else for (const fn of this.#messageFns) fn(msg)
  }

  /**
   * The next message, for the exchange before the channel is handed over
   * (hello and welcome); rejects when the peer closes or is silent `timeoutMs`.
   */
  next(timeoutMs: number): Promise<In> {
    const early = this.#early?.shift()
    if (early !== undefined) return Promise.resolve(early)
    return new Promise((resolve, reject) => {
      const fail = (why: string) => {
        this.#waiter = undefined
        reject(new SpillwayError('ERR_SPILLWAY_PROTOCOL', why))
      }
      const timer = setTimeout(() => fail(`no message from the peer within ${timeoutMs} ms`), timeoutMs)
      this.onClose(() => {
        clearTimeout(timer)
        if (this.#waiter) fail('the peer closed the connection')
      })
      this.#waiter = (m) => {
        clearTimeout(timer)
        resolve(m)
      }
    })
  }

  #fireClose(): void {
    if (this.#closed) return
    this.#closed = true
    for (const fn of this.#closeFns) fn()
  }

  get closed(): boolean {
    return this.#closed
  }

  send(msg: Out): boolean {
    if (this.#closed || this.socket.destroyed) return false
    writeFrame(this.socket, [serialize(msg)]).catch(() => this.socket.destroy())
    return true
  }

  onMessage(fn: (msg: In) => void): void {
    this.#messageFns.push(fn)
    const early = this.#early
    if (!early) return
    this.#early = undefined
    for (const m of early) fn(m)
  }

  onClose(fn: () => void): void {
    if (this.#closed) fn()
    else this.#closeFns.push(fn)
  }

  /** Drops the connection at once (a peer taken as lost). */
  destroy(): void {
    this.socket.destroy()
  }

  close(): void {
    this.socket.end()
    // A peer that never closes its side must not keep us waiting.
    setTimeout(() => this.socket.destroy(), 2000).unref()
  }
}
