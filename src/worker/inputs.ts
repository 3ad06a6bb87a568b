// A run's inputs: read from this worker's own store, or fetched from the
// workers that hold them. Incoming bytes in flight are capped (Dask's 10% of
// the memory limit), so a task with many remote inputs cannot flood memory;
// one input larger than the cap still comes, alone.

import { SpillwayError } from '../base/errors'
import type { WorkerStore } from './store'
import type { DataClient } from '../comm/data-client'
import type { Inputs as InputSpec } from '../wire/protocol'

export interface Lease {
  release(): void
}

export class Inputs {
  #inFlight = 0
  readonly #waiters: Array<() => void> = []

  constructor(
    private readonly buffer: WorkerStore,
    private readonly client: DataClient,
    private readonly limit: number,
  ) {}

  get inFlightBytes(): number {
    return this.#inFlight
  }

  async #reserve(n: number, wait: boolean): Promise<Lease> {
    while (wait && this.#inFlight > 0 && this.#inFlight + n > this.limit) await new Promise<void>((r) => this.#waiters.push(r))
    this.#inFlight += n
    let done = false
    return {
      release: () => {
        if (done) return
        done = true
        this.#inFlight -= n
        for (const w of this.#waiters.splice(0)) w()
      },
    }
  }

  /**
   * `wait: false` for a running task's own fetches (getClient): counted, but
   * not held back by the cap, which the task's inputs may be holding: it
   * would wait on itself. `shared`: for a reader that never writes the
   * bytes, a value held here is the stored bytes themselves, not a copy.
   */
  async get(keys: string[], who: InputSpec, { wait = true, shared = false }: { wait?: boolean; shared?: boolean } = {}): Promise<{ values: Map<string, Uint8Array>; lease: Lease }> {
    const values = new Map<string, Uint8Array>()
    const remote = new Map<string, string[]>()
    const missing: string[] = []
    let remoteBytes = 0
    for (const k of new Set(keys)) {
      if (this.buffer.has(k)) {
        // Read, not brought back: a pass over spilled inputs then writes
        // nothing to make room for them.
        const b = await (shared ? this.buffer.peekShared(k) : this.buffer.peek(k))
        if (b) {
          values.set(k, b)
          continue
        }
      }
      const w = who[k]
      if (!w?.address) {
        missing.push(k)
        continue
      }
      remoteBytes += w.nbytes
      const list = remote.get(w.address) ?? remote.set(w.address, []).get(w.address)!
      list.push(k)
    }
    if (missing.length) throw missingDeps(missing)
    const lease = remote.size ? await this.#reserve(remoteBytes, wait) : { release() {} }
    try {
      await Promise.all(
        [...remote].map(async ([address, ks]) => {
          let got: Map<string, Buffer | undefined>
          try {
            got = await this.client.fetch(address, ks)
          } catch {
            // The holder is gone or unreachable: the scheduler makes the inputs again.
            missing.push(...ks)
            return
          }
          for (const k of ks) {
            const b = got.get(k)
            if (b) values.set(k, b)
            else missing.push(k)
          }
        }),
      )
      if (missing.length) throw missingDeps(missing)
    } catch (e) {
      lease.release()
      throw e
    }
    return { values, lease }
  }
}

function missingDeps(keys: string[]) {
  return Object.assign(new SpillwayError('ERR_SPILLWAY_MISSING_DEP', `inputs not found: ${keys.join(', ')}`, { keys }), { missing: keys })
}
