// A message channel to one worker. Today a child process's IPC channel; the
// scheduler only sees this interface, so a TCP transport can replace it.

import type { ChildProcess } from 'node:child_process'

export interface Transport<In, Out> {
  send(msg: Out): boolean
  onMessage(fn: (msg: In) => void): void
  onClose(fn: () => void): void
  close(): void
  /** Drops the link at once, where the transport can (a socket). */
  destroy?(): void
}

export class ChildTransport<In, Out> implements Transport<In, Out> {
  #closed = false
  #closeFns: Array<() => void> = []

  constructor(private readonly child: ChildProcess) {
    child.once('disconnect', () => this.#fireClose())
    child.once('exit', () => this.#fireClose())
    // A send racing a worker's death fails asynchronously with an 'error'
    // event (EPIPE, ERR_IPC_CHANNEL_CLOSED); unheard, that event would crash
    // the scheduler's process. The loss itself is handled through onClose.
    child.on('error', () => this.#fireClose())
  }

  #fireClose() {
    if (this.#closed) return
    this.#closed = true
    for (const fn of this.#closeFns) fn()
  }

  send(msg: Out): boolean {
    if (this.#closed || !this.child.connected) return false
    try {
      this.child.send(msg as any, (err) => {
        if (err) this.#fireClose()
      })
      return true
    } catch {
      return false
    }
  }

  onMessage(fn: (msg: In) => void): void {
    this.child.on('message', (m) => fn(m as In))
  }

  onClose(fn: () => void): void {
    if (this.#closed) fn()
    else this.#closeFns.push(fn)
  }

  close(): void {
    if (this.child.connected) this.child.disconnect()
  }
}

/** The worker's end: the IPC channel to its parent. */
export class ParentTransport<In, Out> implements Transport<In, Out> {
  send(msg: Out): boolean {
    if (!process.connected || !process.send) return false
    try {
      // The parent going away is handled by onClose; a failed send must
      // not also crash the worker with an unheard 'error'.
      process.send(msg as any, undefined, undefined, () => {})
      return true
    } catch {
      return false
    }
  }

  onMessage(fn: (msg: In) => void): void {
    process.on('message', (m) => fn(m as In))
  }

  onClose(fn: () => void): void {
    process.once('disconnect', fn)
  }

  close(): void {
    if (process.connected) process.disconnect()
  }
}
