// Scattered values have no task to make them again, so the scheduler keeps a
// copy of each in a SpillBuffer of its own, under the cluster's spill
// directory, with little memory: most copies live compressed on disk. When
// the worker holding one dies, the copy is put on another worker.

import { SpillBuffer } from '../native/spill-buffer'
import { SpillwayError } from '../base/errors'

export class ScatterBackup {
  #buffer: SpillBuffer | undefined

  constructor(
    private readonly dir: string,
    private readonly memoryLimit = 64 * 2 ** 20,
    private readonly codec = 'auto',
  ) {}

  #store(): SpillBuffer {
    this.#buffer ??= new SpillBuffer({ dir: this.dir, memoryLimit: this.memoryLimit, target: 0.5, codec: this.codec })
    return this.#buffer
  }

  set(key: string, bytes: Buffer): Promise<void> {
    return this.#store().set(key, bytes)
  }

  async get(key: string): Promise<Buffer> {
    const b = await this.#store().get(key)
    if (!b) throw new SpillwayError('ERR_SPILLWAY_CHUNK_LOST', `the copy of scattered value ${JSON.stringify(key)} is gone`, { key })
    return b
  }

  delete(key: string): void {
    this.#buffer?.delete(key)
  }

  /** Bytes the copies take: in memory and on disk. */
  metrics() {
    return this.#buffer?.metrics()
  }

  async close(): Promise<void> {
    const b = this.#buffer
    this.#buffer = undefined
    await b?.close()
  }
}
