// Only what the asked-for keys need is submitted (Dask's cull). A frame's
// one partition (head, tail) carries its whole graph: a sort's or a join's
// every output. Submitted unheld, those ran and then stayed in memory for
// good, since no one held them to let go of (a sortBy().head(3) left five
// sorted partitions and thirty shards on the workers).

import type { TaskSubmission } from '../scheduler/state'

/** `tasks` that `keys` depend on, themselves included, in their order. */
export function cull(tasks: TaskSubmission[], keys: Iterable<string>): TaskSubmission[] {
  const byKey = new Map(tasks.map((t) => [t.key, t]))
  const needed = new Set<string>()
  const stack = [...keys]
  while (stack.length) {
    const k = stack.pop()!
    if (needed.has(k)) continue
    needed.add(k)
    for (const d of byKey.get(k)?.deps ?? []) stack.push(d)
  }
  return needed.size === tasks.length ? tasks : tasks.filter((t) => needed.has(t.key))
}
