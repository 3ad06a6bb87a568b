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
