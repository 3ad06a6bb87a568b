// The nanny's watch on a worker from outside, as Dask's: every 50 ms it reads
// the process's resident memory (from /proc) and kills it past the terminate
// threshold. Used by the local nanny and by `spillway worker`'s.

import { readFile } from 'node:fs/promises'
import type { ChildProcess } from 'node:child_process'

/** Resident memory of a process, read from /proc; undefined elsewhere. */
export async function rssOf(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8')
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(status)
    return m ? Number(m[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

export interface TerminateWatch {
  memoryLimit: number
  /** The terminate fraction now (thresholds can be retuned while it runs). */
  terminate: () => number
  /** The worker's own figure, where /proc cannot be read. */
  fallbackRss?: () => number | undefined
  /** Whether the worker still counts (a lost one is not killed again). */
  alive?: () => boolean
  /** Told why, with the figures seen, just before the kill. */
  onKill: (message: string, seen: { rss: number; terminate: number }) => void
}

/** Starts the watch; clear the returned timer when the child is gone. */
export function watchTerminate(child: ChildProcess, w: TerminateWatch): NodeJS.Timeout {
  let busy = false
  const timer = setInterval(async () => {
    if (busy || !child.pid || child.exitCode !== null) return
    busy = true
    try {
      const rss = (await rssOf(child.pid)) ?? w.fallbackRss?.()
      const terminate = w.terminate()
      if (rss !== undefined && rss > terminate * w.memoryLimit && child.exitCode === null && (w.alive?.() ?? true)) {
        w.onKill(`process memory ${(rss / 2 ** 30).toFixed(2)} GiB exceeds ${Math.round(terminate * 100)}% of its ${(w.memoryLimit / 2 ** 30).toFixed(2)} GiB limit; restarting`, { rss, terminate })
        child.kill('SIGKILL')
      }
    } finally {
      busy = false
    }
  }, 50)
  timer.unref()
  return timer
}
