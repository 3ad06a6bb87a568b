// The pushes one input task has under way: their bytes (held against the
// outgoing cap until each lands) and the failures they ended in, which the
// task turns into a lost owner once it has stopped sending. Shared by the
// shuffle's shard batches and the rechunk's byte batches.

export class Flights {
  /** Bytes of the pushes not landed yet. */
  bytes = 0
  readonly failures: unknown[] = []
  readonly #under = new Set<Promise<void>>()

  constructor(
    /** Counts what landed (the worker's sent bytes). */
    private readonly landed: (bytes: number) => void,
  ) {}

  /** A push of `bytes` under way: counted until it lands or fails. */
  add(bytes: number, push: Promise<void>): void {
    const f: Promise<void> = push
      .then(() => this.landed(bytes))
      .catch((e) => {
        this.failures.push(e)
      })
      .finally(() => {
        this.bytes -= bytes
        this.#under.delete(f)
      })
    this.bytes += bytes
    this.#under.add(f)
  }

  /** Until one of the pushes ends. */
  async one(): Promise<void> {
    await Promise.race(this.#under)
  }

  /** Until every push has ended. */
  async all(): Promise<void> {
    await Promise.all(this.#under)
  }
}
