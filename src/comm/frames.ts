// Length-prefixed frames over a stream socket: [u32 length][bytes]. A large
// frame is copied once, into a buffer of its final size, as its pieces
// arrive; small ones are sliced from what arrived.

import type { Socket } from 'node:net'
import { SpillwayError } from '../base/errors'

export const MAX_FRAME = 2 ** 32 - 1

export class FrameReader {
  #pieces: Buffer[] = []
  #have = 0
  #want = -1
  #big: Buffer | undefined
  #filled = 0

  constructor(
    private readonly onFrame: (frame: Buffer) => void,
    /** The longest frame taken; a longer length prefix throws before any of it is held. */
    public maxFrame = MAX_FRAME,
  ) {}

  push(chunk: Buffer): void {
    while (chunk.length) {
      if (this.#big) {
        const n = Math.min(chunk.length, this.#big.length - this.#filled)
        chunk.copy(this.#big, this.#filled, 0, n)
        this.#filled += n
        chunk = chunk.subarray(n)
        if (this.#filled === this.#big.length) {
          const f = this.#big
          this.#big = undefined
          this.#want = -1
          this.onFrame(f)
        }
        continue
      }
      this.#pieces.push(chunk)
      this.#have += chunk.length
      chunk = Buffer.alloc(0)
      for (;;) {
        if (this.#want < 0) {
          if (this.#have < 4) return
          const head = this.#take(4)
          this.#want = head.readUInt32BE(0)
          if (this.#want > this.maxFrame) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `frame of ${this.#want} bytes exceeds ${this.maxFrame}`)
        }
        if (this.#have >= this.#want) {
          const f = this.#take(this.#want)
          this.#want = -1
          this.onFrame(f)
          continue
        }
        if (this.#want > 1 << 20) {
          // Start the big buffer with what is here; the rest is copied in.
          this.#big = Buffer.allocUnsafe(this.#want)
          const rest = this.#take(this.#have)
          rest.copy(this.#big, 0)
          this.#filled = rest.length
        }
        return
      }
    }
  }

  #take(n: number): Buffer {
    const all = this.#pieces.length === 1 ? this.#pieces[0] : Buffer.concat(this.#pieces, this.#have)
    const out = all.subarray(0, n)
    const rest = all.subarray(n)
    this.#pieces = rest.length ? [rest] : []
    this.#have = rest.length
    return out
  }
}

/**
 * Reads frames from an authenticated socket (`rest`: bytes that came with
 * the end of the handshake) into `onFrame`; a malformed stream drops the
 * connection.
 */
export function readFrames(socket: Socket, rest: Buffer, onFrame: (frame: Buffer) => void, maxFrame = MAX_FRAME): FrameReader {
  const reader = new FrameReader(onFrame, maxFrame)
  const feed = (c: Buffer) => {
    try {
      reader.push(c)
    } catch {
      socket.destroy()
    }
  }
  socket.on('data', feed)
  if (rest.length) feed(rest)
  socket.resume()
  return reader
}

/** Writes one frame made of `parts`; resolves once the socket can take more. */
// One wait per socket for the buffer to drain, shared by every write that
// found it full: many frames in flight on one socket (a shuffle's shards)
// would otherwise add a listener each.
const draining = new WeakMap<Socket, Promise<void>>()

function drained(socket: Socket): Promise<void> {
  if (socket.destroyed) return Promise.reject(new SpillwayError('ERR_SPILLWAY_TRANSFER', 'connection closed while writing'))
  let p = draining.get(socket)
  if (!p) {
    p = new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        socket.off('drain', onDrain)
        socket.off('close', onClose)
        draining.delete(socket)
        err ? reject(err) : resolve()
      }
      const onDrain = () => done()
      const onClose = () => done(new SpillwayError('ERR_SPILLWAY_TRANSFER', 'connection closed while writing'))
      socket.once('drain', onDrain)
      socket.once('close', onClose)
    })
    draining.set(socket, p)
  }
  return p
}

export function writeFrame(socket: Socket, parts: Uint8Array[]): Promise<void> {
  let len = 0
  for (const p of parts) len += p.byteLength
  const head = Buffer.allocUnsafe(4)
  head.writeUInt32BE(len, 0)
  let ok = socket.write(head)
  for (const p of parts) ok = socket.write(p) && ok
  return ok ? Promise.resolve() : drained(socket)
}

/** A frame holding a JSON header and a binary payload: [u32 header length][header][payload]. */
export function headed(header: unknown, payload?: Uint8Array): Uint8Array[] {
  const h = Buffer.from(JSON.stringify(header))
  const len = Buffer.allocUnsafe(4)
  len.writeUInt32BE(h.length, 0)
  return payload ? [len, h, payload] : [len, h]
}

export function unhead(frame: Buffer): { header: any; payload: Buffer } {
  if (frame.length < 4) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', 'frame too short for its header')
  const n = frame.readUInt32BE(0)
  if (4 + n > frame.length) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', 'header longer than its frame')
  return { header: JSON.parse(frame.subarray(4, 4 + n).toString('utf8')), payload: frame.subarray(4 + n) }
}
