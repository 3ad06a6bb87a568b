// A worker whose parent died without closing the cluster (killed, out of
// heap, aborted: no 'exit' hook of its own runs) removes the cluster's spill
// directory on its way out, so the spill files and sockets do not outlive
// both. A parent that merely closed the channel (a restart, a retirement)
// is still there, and its directory is left to it.

import { rmSync } from 'node:fs'
import { isClusterSpillDir } from '../config/tempdir'

/** The process that forked this one, as it was at start. */
export const STARTED_BY = process.ppid

/** How long to wait for the kernel to hand this process to a new parent after the channel closed. */
const REPARENT_WAIT_MS = 1000

/**
 * Whether the parent died: the channel closes as its descriptors go, a
 * moment before its children are re-parented, so this polls.
 */
export async function parentDied(waitMs = REPARENT_WAIT_MS): Promise<boolean> {
  const end = Date.now() + waitMs
  for (;;) {
    if (process.ppid !== STARTED_BY) return true
    if (Date.now() >= end) return false
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** The directory a dead parent's worker removes: `spillDir` when it is the whole cluster's, as setupClient made it. */
export function orphanDir(spillDir: string | undefined): string | undefined {
  return spillDir && isClusterSpillDir(spillDir) ? spillDir : undefined
}

/** Removes `spillDir` (the whole cluster's, as setupClient made it) when the parent that made it died. */
export async function removeIfOrphaned(spillDir: string | undefined, waitMs?: number): Promise<void> {
  const dir = orphanDir(spillDir)
  if (!dir || !(await parentDied(waitMs))) return
  try {
    // Every worker of the cluster does this at once: force and retries make the races harmless.
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
  } catch {
    // Exiting anyway; what is left is what was left before.
  }
}
