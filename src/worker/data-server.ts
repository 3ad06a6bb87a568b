// A worker's data server: other workers (and the client's gather) fetch the
// values this worker holds, after the handshake proves they are ours. A
// spilled value is sent as its compressed frame, straight from disk.

import type { Server, Socket } from 'node:net'
import { listen } from '../comm/address'
import { headed, readFrames, unhead, writeFrame } from '../comm/frames'
import { acceptHandshake } from '../comm/handshake'
import { SpillwayError } from '../base/errors'
import { BATCH_REPLY } from '../comm/data-client'

export interface Held {
  /** The stored bytes, or the compressed frame of a spilled value. */
  forTransfer(key: string): Promise<{ compressed: boolean; data: Buffer } | undefined>
  /** A shard a peer pushes; resolves once it is stored (the receiver may hold it back while its memory is high). Throws for a key it does not take. */
  receive(key: string, data: Buffer): Promise<void>
  /** A batch of shards (`shards`: [key, length] pairs, their bytes back to back in `payload`); resolves once all are stored. Throws for one it does not take. */
  receiveBatch(shards: unknown, payload: Buffer): Promise<void>
}

export interface TransferCounts {
  outgoingBytes: number
  outgoingCount: number
  incomingBytes: number
  incomingCount: number
}

export class DataServer {
  #server: Server | undefined
  readonly #sockets = new Set<Socket>()
  address = ''

  constructor(
    private readonly store: Held,
    private readonly secret: Buffer,
    private readonly counts: TransferCounts,
    private readonly log: (message: string) => void,
  ) {}

  async start(address: string): Promise<string> {
    const { server, address: bound } = await listen(address, (s) => this.#accept(s))
    this.#server = server
    this.address = bound
    return bound
  }

  async #accept(socket: Socket): Promise<void> {
    this.#sockets.add(socket)
    socket.once('close', () => this.#sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    let rest: Buffer
    try {
      rest = await acceptHandshake(socket, this.secret)
    } catch (e: any) {
      this.log(`refused a data connection: ${e.message}`)
      socket.destroy()
      return
    }
    // Requests on one connection are answered in order.
    let chain = Promise.resolve()
    readFrames(socket, rest, (frame) => {
      chain = chain.then(() => this.#answer(socket, frame)).catch(() => {
        socket.destroy()
      })
    })
  }

  async #answer(socket: Socket, frame: Buffer): Promise<void> {
    const { header, payload } = unhead(frame)
    const id = header?.id
    if (typeof header?.put === 'string') {
      try {
        await this.store.receive(header.put, payload)
      } catch (e) {
        // A coded refusal (no room for the shard) is the sender's answer; the connection stays.
        if (!(e instanceof SpillwayError)) throw e
        await writeFrame(socket, headed({ id, key: header.put, status: 'refused', code: e.code, error: e.message, details: e.details }))
        return
      }
      this.counts.incomingBytes += payload.length
      this.counts.incomingCount++
      await writeFrame(socket, headed({ id, key: header.put, status: 'stored' }))
      return
    }
    if (header?.shards !== undefined) {
      await this.store.receiveBatch(header.shards, payload)
      this.counts.incomingBytes += payload.length
      this.counts.incomingCount++
      await writeFrame(socket, headed({ id, key: BATCH_REPLY, status: 'stored' }))
      return
    }
    const keys: unknown = header?.keys
    if (!Array.isArray(keys)) throw new Error('bad request')
    for (const key of keys) {
      if (typeof key !== 'string') throw new Error('bad key')
      let held: Awaited<ReturnType<Held['forTransfer']>>
      let error: string | undefined
      try {
        held = await this.store.forTransfer(key)
      } catch (e: any) {
        error = `${e?.code ?? 'Error'}: ${e?.message ?? e}`
      }
      if (!held) {
        await writeFrame(socket, headed({ id, key, status: 'missing', error }))
        continue
      }
      this.counts.outgoingBytes += held.data.length
      this.counts.outgoingCount++
      await writeFrame(socket, headed({ id, key, status: held.compressed ? 'compressed' : 'raw' }, held.data))
    }
  }

  close(): void {
    for (const s of this.#sockets) s.destroy()
    this.#server?.close()
  }
}
