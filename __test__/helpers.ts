import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A scratch directory removed when the test ends. */
export function scratch(t: { teardown(fn: () => void): void }, prefix = 'spillway-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * `len` bytes that do not compress, reproducible from `seed`: on disk they
 * are the value itself plus a frame header. Self-contained, so a task can
 * ship it (`client.submit(noise, [seed, len])`).
 */
export const noise = (seed: number, len: number): Buffer => {
  const b = Buffer.alloc(len)
  let x = (seed * 2654435761 + 1) >>> 0
  for (let i = 0; i + 4 <= len; i += 4) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    b.writeUInt32LE(x >>> 0, i)
  }
  return b
}
