// Fetches values from workers' data servers: one authenticated connection
// per peer, requests answered in order on it. A compressed frame (a value the
// peer had spilled) is decompressed here, off the JS thread.

import type { Socket } from 'node:net'
import { decompress } from '../native/codecs'
import { SpillwayError } from '../base/errors'
import { dial } from './address'
import { FrameReader, headed, unhead, writeFrame } from './frames'
import { offerHandshake } from './handshake'

interface Pending {
  id: number
  want: number
  got: Map<string, Buffer | undefined>
  resolve(m: Map<string, Buffer | undefined>): void
  reject(e: Error): void
}

class Connection {
  #queue: Pending[] = []
  #next = 1
  #closed = false

  constructor(
    readonly address: string,
    private readonly socket: Socket,
    rest: Buffer,
    private readonly onBytes: (n: number) => void,
    private readonly onClose: () => void,
  ) {
    const reader = new FrameReader((f) => this.#frame(f))
    socket.on('data', (c) => {
      try {
        reader.push(c)
      } catch (e: any) {
        this.#fail(e)
      }
    })
    socket.once('close', () => this.#fail(transferError(address, 'the connection closed')))
    // A peer whose node dropped off the network sends nothing and no reset: a
    // request waiting that long fails (and its value is made again) instead of hanging.
    socket.setTimeout(STALL_MS, () => {
      if (this.#queue.length) this.#fail(transferError(address, `no data for ${STALL_MS / 1000} s`))
    })
    socket.on('error', (e) => this.#fail(transferError(address, e.message)))
    if (rest.length) reader.push(rest)
    socket.resume()
  }

  get closed(): boolean {
    return this.#closed
  }

  #frame(f: Buffer) {
    const { header, payload } = unhead(f)
    const p = this.#queue[0]
    if (!p || header.id !== p.id) return this.#fail(transferError(this.address, 'reply out of order'))
    if (header.status === 'refused') {
      // The peer took the request and said no, with a code (a shard it has no room for): that request fails, the connection stays.
      this.#queue.shift()
      return p.reject(new SpillwayError(header.code, String(header.error), { ...header.details, refused: true, address: this.address }))
    }
    if (header.status === 'missing') p.got.set(header.key, undefined)
    else {
      this.onBytes(payload.length)
      // Marked compressed: a frame to verify and decode, not bytes to trust.
      p.got.set(header.key, header.status === 'compressed' ? Object.assign(payload, { compressedFrame: true }) : payload)
    }
    if (p.got.size === p.want) {
      this.#queue.shift()
      p.resolve(p.got)
    }
  }

  #fail(e: Error) {
    if (this.#closed) return
    this.#closed = true
    this.socket.destroy()
    for (const p of this.#queue) p.reject(e)
    this.#queue = []
    this.onClose()
  }

  request(keys: string[]): Promise<Map<string, Buffer | undefined>> {
    if (this.#closed) return Promise.reject(transferError(this.address, 'the connection is closed'))
    const id = this.#next++
    return new Promise((resolve, reject) => {
      this.#queue.push({ id, want: new Set(keys).size, got: new Map(), resolve, reject })
      writeFrame(this.socket, headed({ id, keys })).catch((e) => this.#fail(e))
    })
  }

  /** Sends a value for the peer to store (a shuffle's shard); resolves once it is stored or dropped as already held. */
  push(key: string, data: Buffer): Promise<Map<string, Buffer | undefined>> {
    if (this.#closed) return Promise.reject(transferError(this.address, 'the connection is closed'))
    const id = this.#next++
    return new Promise((resolve, reject) => {
      this.#queue.push({ id, want: 1, got: new Map(), resolve, reject })
      writeFrame(this.socket, headed({ id, put: key }, data)).catch((e) => this.#fail(e))
    })
  }

  /** Sends a batch of shards, their bytes back to back; resolves once the peer stored them all. */
  pushBatch(shards: [string, number][], data: Buffer[]): Promise<Map<string, Buffer | undefined>> {
    if (this.#closed) return Promise.reject(transferError(this.address, 'the connection is closed'))
    const id = this.#next++
    return new Promise((resolve, reject) => {
      this.#queue.push({ id, want: 1, got: new Map(), resolve, reject })
      writeFrame(this.socket, [...headed({ id, shards }), ...data]).catch((e) => this.#fail(e))
    })
  }

  close() {
    this.#fail(transferError(this.address, 'closed'))
  }
}

/** The key a data server's reply to a batch of shards carries. */
export const BATCH_REPLY = 'shard-batch'

/** Silence from a peer, with requests waiting, that counts as a lost connection. */
export const STALL_MS = 30_000

function transferError(address: string, why: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_TRANSFER', `transfer from ${address} failed: ${why}`, { address })
}

/**
 * A peer that closed or stalled during the handshake (it died, or was
 * stopped and then died) is a lost peer, as one that refused the
 * connection: ERR_SPILLWAY_TRANSFER with its address, so a shuffle's push
 * to it counts as a lost owner. A proven mismatch (secret, version) stays
 * what it is.
 */
function handshakeFailure(address: string, e: unknown): unknown {
  if (!(e instanceof SpillwayError) || e.code !== 'ERR_SPILLWAY_AUTH' || !e.details.lost) return e
  return transferError(address, `${e.message} (the peer died or stalled before it answered)`)
}

export class DataClient {
  readonly #connections = new Map<string, Promise<Connection>>()
  incomingBytes = 0
  incomingCount = 0

  constructor(private readonly secret: Buffer) {}

  #connection(address: string): Promise<Connection> {
    let c = this.#connections.get(address)
    if (!c) {
      c = (async () => {
        const socket = await dial(address).catch((e) => {
          throw transferError(address, e.message)
        })
        try {
          const rest = await offerHandshake(socket, this.secret)
          return new Connection(address, socket, rest, (n) => {
            this.incomingBytes += n
            this.incomingCount++
          }, () => this.#connections.delete(address))
        } catch (e) {
          socket.destroy()
          throw handshakeFailure(address, e)
        }
      })()
      this.#connections.set(address, c)
      c.catch(() => this.#connections.delete(address))
    }
    return c
  }

  /**
   * The stored bytes of each key at `address`; undefined for a key the peer
   * does not hold. Rejects with ERR_SPILLWAY_TRANSFER when the peer is
   * unreachable.
   */
  async fetch(address: string, keys: string[]): Promise<Map<string, Buffer | undefined>> {
    const conn = await this.#connection(address)
    const got = await conn.request(keys)
    for (const [k, v] of got) {
      if (v && (v as any).compressedFrame) got.set(k, await decompress(v))
    }
    return got
  }

  /**
   * Like fetch, but a value the peer had spilled stays the compressed frame
   * it sent (`frame: true`), for a store that keeps it on disk as it is.
   */
  async fetchFrames(address: string, keys: string[]): Promise<Map<string, { frame: boolean; data: Buffer } | undefined>> {
    const conn = await this.#connection(address)
    const got = await conn.request(keys)
    return new Map([...got].map(([k, v]) => [k, v && { frame: Boolean((v as any).compressedFrame), data: v }]))
  }

  /** Stores `data` under `key` at the peer (its data server takes only shuffle shards). */
  async push(address: string, key: string, data: Buffer): Promise<void> {
    const conn = await this.#connection(address)
    const got = await conn.push(key, data)
    if (!got.has(key)) throw transferError(address, `the peer did not take ${key}`)
  }

  /** Stores a batch of shards at the peer, each under its key (see shuffle/batches.ts). */
  async pushBatch(address: string, shards: [string, number][], data: Buffer[]): Promise<void> {
    const conn = await this.#connection(address)
    const got = await conn.pushBatch(shards, data)
    if (!got.has(BATCH_REPLY)) throw transferError(address, `the peer did not take a batch of ${shards.length} shards`)
  }

  close(): void {
    for (const c of this.#connections.values()) c.then((x) => x.close(), () => {})
    this.#connections.clear()
  }
}
