// Free heap back to the OS before memory counts against the worker. glibc
// keeps what tasks free (more of it on workers of 1 GiB or more, whose
// malloc thresholds are raised: src/deploy/malloc-env.ts), and that kept
// memory is resident: the thresholds and the nanny's terminate watch would
// take it for data, spill values and pause for it, or kill the worker.
// malloc_trim(0) walks every arena's free lists (a few ms at most) but the
// pages it returns must be faulted in again by the next allocations, which
// is the very cost the raised thresholds save; so the monitor trims only
// when process memory is past its lowest threshold, and at most once per
// memory check, however many paths (each task's start, makeRoom, the
// timer) ask in between.

import { native } from '../native/binding'

export class HeapTrim {
  #last = -Infinity

  constructor(
    private readonly everyMs: number,
    private readonly measure: () => number,
  ) {}

  /** Process memory after giving free heap back; `rss` unchanged when a trim ran within the last check or released nothing. */
  after(rss: number): number {
    const now = performance.now()
    if (now - this.#last < this.everyMs) return rss
    this.#last = now
    return native.trimHeap() ? this.measure() : rss
  }
}
