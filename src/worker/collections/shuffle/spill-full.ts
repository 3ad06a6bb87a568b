// A receiver that cannot take a shard: paused, and its spill disk has no
// room for it. Waiting there (the backpressure that serves while spilling
// makes room) would hold every sender, and the items each split holds,
// until the workers pass their limit; the push is refused instead, with the
// figures, and the input that sent it fails with ERR_SPILLWAY_SPILL_FULL.

import { ownTaskError, SpillwayError } from '../../../base/errors'
import { formatBytes } from '../../../base/units'
import type { WorkerStatus } from '../../../wire/protocol'
import type { SpillRoom } from '../../memory-monitor'

/** How long a paused worker's disk may have no room before a shard is refused: time for a spill in flight to land, or be refused. */
export const FULL_GRACE_MS = 1000
const POLL_MS = 20

export interface RoomHost {
  /** This worker's data address; `name` where it is known. */
  readonly address: string
  readonly name?: string
  status(): WorkerStatus
  /** The figures, where `bytes` more fit neither under the pause threshold nor on the spill disk; undefined while they fit. */
  spillRoom?(bytes: number): SpillRoom | undefined
}

/**
 * Waits while the worker is paused (as a receiver, `take`), as long as it has room
 * for the shard: spilling makes room in memory. Resolves false once
 * `dropped` says the shard is no longer wanted; throws
 * ERR_SPILLWAY_SPILL_FULL once the shard has fitted neither under `pause`
 * nor on the disk for FULL_GRACE_MS (the worker's status alone would not
 * do: a collection takes it under `pause` for a moment, and a task starts).
 */
export async function untilRoom(host: RoomHost, key: string, bytes: number, dropped: () => boolean, role: 'take' | 'send' = 'take'): Promise<boolean> {
  let fullSince: number | undefined
  for (;;) {
    if (dropped()) return false
    const full = host.spillRoom?.(bytes)
    if (full && performance.now() - (fullSince ??= performance.now()) >= FULL_GRACE_MS) throw spillFullError(host.name ?? host.address, key, full, role)
    if (!full) {
      fullSince = undefined
      // A sender goes on while paused: what it sends leaves its memory.
      if (role === 'send' || host.status() !== 'paused') return true
    }
    await new Promise((r) => setTimeout(r, POLL_MS))
  }
}

function spillFullError(worker: string, key: string, r: SpillRoom, role: 'take' | 'send'): SpillwayError {
  const free = r.freeBytes === undefined ? 'unknown free space' : `${formatBytes(r.freeBytes)} free`
  const cap = r.maxSpill === null ? 'no maxSpill' : `${formatBytes(r.spilledBytes)} written of its maxSpill of ${formatBytes(r.maxSpill)}`
  return ownTaskError(
    'ERR_SPILLWAY_SPILL_FULL',
    `worker ${worker} cannot ${role} shard ${key} of ${formatBytes(r.bytes)}: it is at ${formatBytes(r.rss)} of its ${formatBytes(r.memoryLimit)} memory limit, past its pause threshold with it, and its spill disk has no room for it ` +
      `(${r.spillDir}: ${free}, ${cap}${r.lastWriteError ? `; last write: ${r.lastWriteError}` : ''}). ` +
      'What to do: give the spill disk more room (a higher maxSpill, tempBaseDir on a bigger filesystem, more local disk: SLURM --tmp, PBS jobfs), add workers or memory, ' +
      'or send less through the shuffle (filter or project items before it; foldBy and frequencies send combined partials). The shuffle is dropped: its shards are freed on every worker',
    { worker, key, bytes: r.bytes, freeBytes: r.freeBytes, maxSpill: r.maxSpill, spilledBytes: r.spilledBytes, spillDir: r.spillDir, rss: r.rss, memoryLimit: r.memoryLimit },
  )
}

/**
 * A push an owner refused with a code of its own (its disk full): the
 * input's own failure, with the owner's words, rather than a task error
 * wrapping them.
 */
export function refusedByOwner(e: unknown): unknown {
  return e instanceof SpillwayError && e.details.refused ? ownTaskError(e.code, e.message, e.details) : e
}
