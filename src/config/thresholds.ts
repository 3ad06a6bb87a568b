// The one check of memory thresholds, for SetupConfig's options and for
// thresholds that arrive later (tuning, a worker's start settings): each a
// fraction of the worker's limit in (0, 1], strictly increasing.

export interface Thresholds {
  target: number
  spill: number
  pause: number
  terminate: number
}

export const THRESHOLD_NAMES = ['target', 'spill', 'pause', 'terminate'] as const

export interface ThresholdProblem {
  /** Which threshold ('target', ...): callers name it as their own field. */
  name: (typeof THRESHOLD_NAMES)[number]
  value: unknown
  allowed: string
}

/**
 * What is wrong with `t`, one problem per threshold. `label` names a
 * threshold in the messages (SetupConfig passes its option names).
 */
export function thresholdProblems(t: Partial<Record<(typeof THRESHOLD_NAMES)[number], unknown>>, label: (name: string) => string = (n) => n): ThresholdProblem[] {
  const problems: ThresholdProblem[] = []
  const inRange = THRESHOLD_NAMES.filter((name) => {
    const v = t[name]
    if (typeof v === 'number' && v > 0 && v <= 1) return true
    problems.push({ name, value: v, allowed: 'a fraction of the worker memory limit in (0, 1]' })
    return false
  })
  if (inRange.length < THRESHOLD_NAMES.length) return problems
  const order = THRESHOLD_NAMES.map(label).join(' < ')
  for (let i = 1; i < THRESHOLD_NAMES.length; i++) {
    const [lower, name] = [THRESHOLD_NAMES[i - 1], THRESHOLD_NAMES[i]]
    if (!((t[name] as number) > (t[lower] as number))) {
      problems.push({ name, value: t[name], allowed: `greater than ${label(lower)} (${t[lower]}): thresholds must increase, ${order}` })
    }
  }
  return problems
}
