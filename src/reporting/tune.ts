// tune_memory_thresholds(): read spill from the scheduler and move target /
// spill on every live worker. Little spill → tighten (more OOM headroom);
// a lot → loosen (less disk write amplification). An off threshold (false)
// stays off: tuning moves a fraction, and off has none to move.

import type { Client } from '../client/client'
import { ConfigError, type ConfigProblem } from '../base/errors'
import { clusterMemorySnapshot } from './workers'

export type TuneStrategy = 'auto' | 'tighten' | 'loosen' | 'off'

export interface TuneOptions {
  strategy?: TuneStrategy
  spillThresholdGib?: number
  tightenBy?: number
  loosenBy?: number
}

export const TARGET_RANGE = [0.4, 0.9] as const
export const SPILL_RANGE = [0.5, 0.95] as const

export interface TuneResult {
  strategy: TuneStrategy
  action: 'tighten' | 'loosen' | 'none'
  workers: number
  spillGib: number
  spillThresholdGib: number
  before: { target: number | false; spill: number | false }
  after: { target: number | false; spill: number | false }
  reason: string
  summary(): string
}

const clamp = (v: number, [lo, hi]: readonly [number, number]) => Math.min(hi, Math.max(lo, v))
const round = (v: number) => Math.round(v * 1e6) / 1e6
const pct = (v: number) => `${Math.round(v * 100)}%`
const move = (name: string, before: number | false, after: number | false) => (before === false || after === false ? `${name} off (not tuned)` : `${name} ${pct(before)}→${pct(after)}`)

/** The pure decision, so it can be tested without a cluster. */
export function decideThresholds(
  current: { target: number | false; spill: number | false },
  spillGib: number,
  o: Required<TuneOptions>,
): Omit<TuneResult, 'workers' | 'summary' | 'strategy'> {
  const base = { spillGib, spillThresholdGib: o.spillThresholdGib, before: { ...current } }
  if (o.strategy === 'off') return { ...base, action: 'none', after: { ...current }, reason: "strategy 'off'" }
  if (current.target === false && current.spill === false) {
    return { ...base, action: 'none', after: { ...current }, reason: 'target and spill are off (false): tuning cannot move an off threshold' }
  }
  const high = spillGib >= o.spillThresholdGib
  const action = o.strategy === 'auto' ? (high ? 'loosen' : 'tighten') : o.strategy
  const delta = action === 'loosen' ? o.loosenBy : -o.tightenBy
  const moved = (v: number | false, range: readonly [number, number]): number | false => (v === false ? false : round(clamp(v + delta, range)))
  const after = { target: moved(current.target, TARGET_RANGE), spill: moved(current.spill, SPILL_RANGE) }
  const { target, spill } = after
  if (target !== false && spill !== false && target >= spill) after.target = round(Math.max(TARGET_RANGE[0], spill - 0.05))
  const why = high
    ? `high spill (${spillGib.toFixed(2)} GiB ≥ ${o.spillThresholdGib.toFixed(2)} GiB threshold)`
    : `low spill (${spillGib.toFixed(2)} GiB < ${o.spillThresholdGib.toFixed(2)} GiB threshold)`
  const what = action === 'loosen' ? 'loosened thresholds to reduce disk write amplification' : 'tightened thresholds for more OOM headroom'
  const off = current.target === false ? 'target' : current.spill === false ? 'spill' : undefined
  const note = off ? `; ${off} is off (false): tuning cannot move an off threshold` : ''
  return { ...base, action, after, reason: `${why}; ${what}${note}` }
}

function validate(o: TuneOptions): Required<TuneOptions> {
  const problems: ConfigProblem[] = []
  const known = new Set(['strategy', 'spillThresholdGib', 'tightenBy', 'loosenBy'])
  for (const k of Object.keys(o)) if (!known.has(k)) problems.push({ field: k, value: (o as any)[k], allowed: `one of ${[...known].join(', ')}` })
  const r = { strategy: o.strategy ?? 'auto', spillThresholdGib: o.spillThresholdGib ?? 0.5, tightenBy: o.tightenBy ?? 0.05, loosenBy: o.loosenBy ?? 0.05 }
  if (!['auto', 'tighten', 'loosen', 'off'].includes(r.strategy)) problems.push({ field: 'strategy', value: r.strategy, allowed: "'auto', 'tighten', 'loosen' or 'off'" })
  if (!(typeof r.spillThresholdGib === 'number' && r.spillThresholdGib >= 0)) problems.push({ field: 'spillThresholdGib', value: r.spillThresholdGib, allowed: 'a number of GiB ≥ 0' })
  for (const f of ['tightenBy', 'loosenBy'] as const) {
    if (!(typeof r[f] === 'number' && r[f] >= 0 && r[f] < 0.5)) problems.push({ field: f, value: r[f], allowed: 'a fraction in [0, 0.5)' })
  }
  if (problems.length) throw new ConfigError(problems, 'tuneMemoryThresholds options')
  return r as Required<TuneOptions>
}

export async function tuneMemoryThresholds(client: Client, options: TuneOptions = {}): Promise<TuneResult> {
  const o = validate(options)
  const snap = await clusterMemorySnapshot(client)
  const { target, spill } = client.scheduler.thresholds
  const d = decideThresholds({ target, spill }, snap.spillGib, o)
  const workers = client.scheduler.workers.size
  if (d.action !== 'none') await client.scheduler.setThresholds(d.after)
  const summary = () =>
    d.action === 'none'
      ? `Memory thresholds unchanged on ${workers} worker(s) (${d.reason})`
      : `Memory thresholds adjusted on ${workers} worker(s): ${move('target', d.before.target, d.after.target)}, ${move('spill', d.before.spill, d.after.spill)} (${d.reason})`
  return { ...d, strategy: o.strategy, workers, summary }
}
