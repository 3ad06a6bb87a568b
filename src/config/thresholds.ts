// The one check of memory thresholds, for SetupConfig's options and for
// thresholds that arrive later (tuning, a worker's start settings): each a
// fraction of the worker's limit in (0, 1], strictly increasing. `target`
// and `spill` may be false, off (Dask's `target: False` / `spill: False`):
// an off threshold takes no part in the order.

export interface Thresholds {
  /** Spill LRU values when managed memory passes it; false: managed memory alone never spills. */
  target: number | false
  /** Spill when process memory passes it, down to `target` (or to itself when target is off); false: never. */
  spill: number | false
  pause: number
  terminate: number
}

export const THRESHOLD_NAMES = ['target', 'spill', 'pause', 'terminate'] as const
export type ThresholdName = (typeof THRESHOLD_NAMES)[number]

/** The thresholds that may be false (off). */
export const OFF_THRESHOLDS: readonly ThresholdName[] = ['target', 'spill']

export interface ThresholdProblem {
  /** Which threshold ('target', ...): callers name it as their own field. */
  name: ThresholdName
  value: unknown
  allowed: string
}

/** What threshold `name` may be, for an error's "allowed". */
export function thresholdAllowed(name: ThresholdName, label: (name: string) => string = (n) => n): string {
  const fraction = 'a fraction of the worker memory limit in (0, 1]'
  return OFF_THRESHOLDS.includes(name) ? `${fraction}, or false (off)` : `${fraction}; only ${OFF_THRESHOLDS.map(label).join(' and ')} can be false (off)`
}

export function isThreshold(name: ThresholdName, v: unknown): boolean {
  return (typeof v === 'number' && v > 0 && v <= 1) || (v === false && OFF_THRESHOLDS.includes(name))
}

/**
 * What is wrong with `t`, one problem per threshold. `label` names a
 * threshold in the messages (SetupConfig passes its option names).
 */
export function thresholdProblems(t: Partial<Record<ThresholdName, unknown>>, label: (name: string) => string = (n) => n): ThresholdProblem[] {
  const problems: ThresholdProblem[] = []
  const inRange = THRESHOLD_NAMES.filter((name) => {
    if (isThreshold(name, t[name])) return true
    problems.push({ name, value: t[name], allowed: thresholdAllowed(name, label) })
    return false
  })
  if (inRange.length < THRESHOLD_NAMES.length) return problems
  const on = THRESHOLD_NAMES.filter((name) => t[name] !== false)
  const order = THRESHOLD_NAMES.map(label).join(' < ')
  for (let i = 1; i < on.length; i++) {
    const [lower, name] = [on[i - 1], on[i]]
    if (!((t[name] as number) > (t[lower] as number))) {
      problems.push({ name, value: t[name], allowed: `greater than ${label(lower)} (${t[lower]}): thresholds must increase, ${order} (an off one, false, is left out)` })
    }
  }
  return problems
}

/** The fraction spilling by process memory brings the worker down to: target, else spill itself (as Dask). */
export function spillFloor(t: Thresholds): number | false {
  return t.target !== false ? t.target : t.spill
}

/** The lowest threshold that is on: above it, memory is worth a look (garbage collected, counted as waiting). */
export function lowestOn(t: Thresholds): number {
  return t.target !== false ? t.target : t.spill !== false ? t.spill : t.pause
}
