// A counting gate: at most `limit` holders, and none admitted while `open()`
// says no (a paused worker starts nothing new). Waiters are admitted in order.

export class Gate {
  #held = 0
  readonly #queue: Array<() => void> = []

  constructor(
    private readonly limit: number,
    private readonly open: () => boolean,
  ) {}

  acquire(): Promise<void> {
    if (this.#held < this.limit && this.#queue.length === 0 && this.open()) {
      this.#held++
      return Promise.resolve()
    }
    return new Promise((resolve) => this.#queue.push(resolve))
  }

  /**
   * `acquire`, or false once `stop` aborts while it waits: the waiter leaves
   * the queue (a run given back or released before it started holds no place).
   */
  acquireUnless(stop: AbortSignal): Promise<boolean> {
    if (stop.aborted) return Promise.resolve(false)
    if (this.#held < this.limit && this.#queue.length === 0 && this.open()) {
      this.#held++
      return Promise.resolve(true)
    }
    return new Promise((resolve) => {
      const admit = () => {
        stop.removeEventListener('abort', leave)
        resolve(true)
      }
      const leave = () => {
        const i = this.#queue.indexOf(admit)
        if (i < 0) return
        this.#queue.splice(i, 1)
        resolve(false)
      }
      this.#queue.push(admit)
      stop.addEventListener('abort', leave, { once: true })
    })
  }

  release(): void {
    this.#held--
    this.wake()
  }

  /** Admits waiters while there is room (after a release, or when the gate opens again). */
  wake(): void {
    while (this.#queue.length && this.#held < this.limit && this.open()) {
      this.#held++
      this.#queue.shift()!()
    }
  }
}
