// Bounds on connections that have not yet proved they hold the secret. A
// stranger costs a descriptor for as long as its handshake may take; left
// unbounded, a flood runs the process out of descriptors, and then the
// scheduler can neither take a real worker nor fork a replacement for a dead
// one. So: a cap per peer address and in total, the oldest dropped first
// (an honest peer's handshake takes a round trip, a stalled one is the
// oldest), and near its descriptor limit (a reserve kept for its own work)
// a newcomer admitted only in place of the busiest address's oldest.

import { readdirSync, readFileSync } from 'node:fs'
import type { Socket } from 'node:net'

export interface AdmissionLimits {
  /** Handshakes in progress from one address. */
  perPeer: number
  /** Handshakes in progress from anywhere. */
  total: number
  /** Descriptors kept free for the process's own work; undefined picks one from the limit. */
  reserveFds?: number
  /** The descriptor limit to keep under; undefined reads this process's (RLIMIT_NOFILE). */
  maxFds?: number
}

export const DEFAULT_ADMISSION: AdmissionLimits = { perPeer: 16, total: 128 }

/** The soft RLIMIT_NOFILE of this process, where /proc says it (Linux); undefined elsewhere or when unlimited. */
export function descriptorLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
    return m ? Number(m[1]) : undefined
  } catch {
    return undefined
  }
}

function openDescriptors(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length
  } catch {
    return undefined
  }
}

/** How often the descriptors are counted again: a count is a directory read, too dear for every connection of a flood. */
const RECOUNT_MS = 100

export class Admission {
  /** Insertion order is age: the first entry is the oldest. */
  readonly #pending = new Map<Socket, string>()
  readonly #perPeer = new Map<string, Socket[]>()
  readonly #limit: number | undefined
  readonly #reserve: number
  #counted = 0
  #countedAt = -Infinity
  /** Handshakes in progress at the last count. */
  #pendingAtCount = 0

  constructor(
    private readonly limits: AdmissionLimits = DEFAULT_ADMISSION,
    /** Told of each connection dropped or refused here, with a reason fit for a summary. */
    private readonly onDrop: (socket: Socket, reason: string) => void,
  ) {
    this.#limit = limits.maxFds ?? descriptorLimit()
    this.#reserve = limits.reserveFds ?? (this.#limit ? Math.max(64, Math.floor(this.#limit / 8)) : 0)
  }

  /** Handshakes in progress now. */
  get pending(): number {
    return this.#pending.size
  }

  /**
   * Takes a fresh connection into the handshake, dropping the oldest where
   * a cap is passed; false when it was refused (and destroyed) instead.
   */
  admit(socket: Socket): boolean {
    if (this.#nearLimit()) {
      // A descriptor for a descriptor: the address with the most handshakes
      // in progress gives up its oldest, so a flood from a few addresses
      // cannot keep a worker from another out, as refusing every newcomer would.
      const shed = this.#busiestOldest()
      if (!shed) {
        this.onDrop(socket, 'the scheduler is near its file descriptor limit')
        socket.destroy()
        return false
      }
      this.#drop(shed, 'the scheduler is near its file descriptor limit: the oldest handshake of the busiest address dropped for a newcomer')
    }
    const peer = socket.remoteAddress ?? '?'
    this.#pending.set(socket, peer)
    let same = this.#perPeer.get(peer)
    if (!same) this.#perPeer.set(peer, (same = []))
    same.push(socket)
    if (same.length > this.limits.perPeer) this.#drop(same[0], `more than ${this.limits.perPeer} handshakes in progress from one address`)
    if (this.#pending.size > this.limits.total) this.#drop(this.#pending.keys().next().value!, `more than ${this.limits.total} handshakes in progress`)
    return this.#pending.has(socket)
  }

  /** The connection's handshake is over (passed, failed or closed). */
  done(socket: Socket): void {
    const peer = this.#pending.get(socket)
    if (peer === undefined) return
    this.#pending.delete(socket)
    const same = this.#perPeer.get(peer)!
    same.splice(same.indexOf(socket), 1)
    if (!same.length) this.#perPeer.delete(peer)
  }

  /** The oldest handshake of the address with the most in progress, where it has more than one. */
  #busiestOldest(): Socket | undefined {
    let most: Socket[] | undefined
    for (const same of this.#perPeer.values()) if (!most || same.length > most.length) most = same
    return most && most.length > 1 ? most[0] : undefined
  }

  #drop(socket: Socket, reason: string): void {
    this.done(socket)
    this.onDrop(socket, reason)
    socket.destroy()
  }

  #nearLimit(): boolean {
    if (!this.#limit) return false
    const now = Date.now()
    if (now - this.#countedAt >= RECOUNT_MS) {
      const n = openDescriptors()
      if (n === undefined) return false
      this.#counted = n
      this.#countedAt = now
      this.#pendingAtCount = this.#pending.size
    }
    // Between counts the handshakes in progress are known exactly and the
    // rest taken to stay as counted. Counting every admission as one more
    // held descriptor would be wrong under a flood: the caps drop as many as
    // are admitted, and thousands a second would pass the limit on paper
    // within a count and refuse every newcomer (a real worker too) until the next.
    return this.#counted - this.#pendingAtCount + this.#pending.size >= this.#limit - this.#reserve
  }
}
