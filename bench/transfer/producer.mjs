// Tasks of bench/transfer: a value of `mb` MiB of incompressible bytes, and
// its length (read once, so the consumer touches what arrived).
import { randomFillSync } from 'node:crypto'

export function make(mb, seed) {
  const b = Buffer.allocUnsafe(mb * 2 ** 20)
  randomFillSync(b)
  b.writeUInt32LE(seed, 0)
  return b
}

export function size(b) {
  let x = 0
  for (let i = 0; i < b.length; i += 4096) x ^= b[i]
  return b.length + (x & 0)
}
