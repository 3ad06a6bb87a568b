// A frame's partitions and its groupBy's combine tree as scheduler tasks.
// Keys are hashes of the plans (as bags' are), so the same frame built twice
// is the same graph and runs once.

import type { TaskSubmission } from '../scheduler/scheduler'
import { nativeFunction } from '../wire/functions'
import type { AggSpecData, CombinePlan, PartitionPlan } from '../wire/frame'

export function frameTask(op: 'frame.partition' | 'frame.combine', key: string, group: string, plan: PartitionPlan | CombinePlan, inputs: string[], hold: boolean): TaskSubmission {
  const deps = inputs.map((k, j) => ({ key: k, path: [1 + j] }))
  return { key, task: { fn: 'call', func: nativeFunction(op, group), args: [plan, ...inputs.map(() => null)], deps }, expectedBytes: 1, deps: [...new Set(inputs)], group, hold }
}

/**
 * Partial states merged in levels of at most `splitEvery` until that many
 * are left, then `splitOut` last tasks, each reading them all and keeping
 * the groups whose key hash is its own (so each group lands in one output).
 * Returns the tasks and the output keys, in order.
 */
export function combineTasks(name: string, partials: string[], agg: AggSpecData, splitEvery: number, splitOut: number): { tasks: TaskSubmission[]; keys: string[] } {
  const tasks: TaskSubmission[] = []
  let level = partials
  for (let depth = 0; level.length > splitEvery; depth++) {
    const next: string[] = []
    for (let j = 0; j < level.length; j += splitEvery) {
      const key = `${name}-agg-${depth}-${j / splitEvery}`
      tasks.push(frameTask('frame.combine', key, 'group-by-combine', { agg, final: false }, level.slice(j, j + splitEvery), false))
      next.push(key)
    }
    level = next
  }
  const keys: string[] = []
  for (let i = 0; i < splitOut; i++) {
    const plan: CombinePlan = splitOut > 1 ? { agg, final: true, split: [splitOut, i] } : { agg, final: true }
    tasks.push(frameTask('frame.combine', `${name}-${i}`, 'group-by', plan, level, false))
    keys.push(`${name}-${i}`)
  }
  return { tasks, keys }
}

/** How many tasks combineTasks makes, counted without making them. */
export function combineTaskCount(n: number, splitEvery: number, splitOut: number): number {
  let count = 0
  for (let level = n; level > splitEvery; level = Math.ceil(level / splitEvery)) count += Math.ceil(level / splitEvery)
  return count + splitOut
}
