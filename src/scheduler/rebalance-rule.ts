// Which values rebalance moves, by Dask's rule (Scheduler._rebalance_find_msgs):
// the measure is each worker's managed bytes against the cluster mean. A
// worker is a sender when it is at least half a gap above the mean and
// above `senderMin` of its limit; a recipient when it is at least half a gap
// below the mean and below `recipientMax` of its limit. Senders give their
// largest values first to the recipient furthest below the mean, never
// taking a sender below the mean nor a recipient above it, until each is
// within half a gap of it. A pure rule: no scheduler state, only figures.

export interface RebalanceWorker<W> {
  worker: W
  /** Managed bytes it holds now. */
  memory: number
  memoryLimit: number
  /** What it holds, and whether a recipient already has a copy (then it is not sent there). */
  values: Array<{ key: string; nbytes: number; on?: ReadonlySet<W> }>
}

export interface RebalanceRule {
  /** Fraction of the limit a sender must be above (Dask's sender-min, 0.30). */
  senderMin: number
  /** Fraction of the limit a recipient must be below (Dask's recipient-max, 0.60). */
  recipientMax: number
  /** Fraction of the limit between sender and recipient (Dask's sender-recipient-gap, 0.10). */
  gap: number
}

export const DASK_REBALANCE: RebalanceRule = { senderMin: 0.3, recipientMax: 0.6, gap: 0.1 }

export interface Move<W> {
  key: string
  nbytes: number
  from: W
  to: W
}

export function planRebalance<W>(workers: RebalanceWorker<W>[], rule: RebalanceRule = DASK_REBALANCE): Move<W>[] {
  if (workers.length < 2) return []
  const mean = workers.reduce((n, w) => n + w.memory, 0) / workers.length
  // Bytes each still has to shed (senders) or may take (recipients) to reach the mean, and the half gap that is close enough.
  const senders: Array<{ w: RebalanceWorker<W>; excess: number; halfGap: number }> = []
  const recipients: Array<{ w: RebalanceWorker<W>; room: number; halfGap: number }> = []
  for (const w of workers) {
    const halfGap = (rule.gap / 2) * w.memoryLimit
    if (w.memory >= mean + halfGap && w.memory >= rule.senderMin * w.memoryLimit) senders.push({ w, excess: w.memory - mean, halfGap })
    else if (w.memory < mean - halfGap && w.memory < rule.recipientMax * w.memoryLimit) recipients.push({ w, room: mean - w.memory, halfGap })
  }
  const moves: Move<W>[] = []
  senders.sort((a, b) => b.excess - a.excess)
  for (const s of senders) {
    for (const v of [...s.w.values].sort((a, b) => b.nbytes - a.nbytes)) {
      if (s.excess <= s.halfGap) break
      // Never below the mean: a value larger than what is left to shed stays.
      if (v.nbytes > s.excess) continue
      let best: (typeof recipients)[number] | undefined
      for (const r of recipients) if (r.room > r.halfGap && r.room >= v.nbytes && !v.on?.has(r.w.worker) && (!best || r.room > best.room)) best = r
      if (!best) continue
      moves.push({ key: v.key, nbytes: v.nbytes, from: s.w.worker, to: best.w.worker })
      s.excess -= v.nbytes
      best.room -= v.nbytes
    }
  }
  return moves
}
