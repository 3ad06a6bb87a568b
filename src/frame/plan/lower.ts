// An optimized plan back into a frame: each node by the method that made it,
// on its inputs as lowered (a node the optimizer left as it was is its frame
// as written). Installed as frame.ts's planner when the package loads.

import { Aggregate, Expr } from '../expr'
import { Frame, GroupBy } from '../frame'
import '../group-by'
import { joinFrames, type JoinOptions } from '../join'
import { readParquet } from '../readers-parquet'
import { sortFrame, type SortOptions } from '../sort'
import { explainPlan } from './explain'
import { planOf, usePlanner, type PlanNode } from './node'
import { optimizePlan } from './optimize'

/** The frame of `n`, each node lowered once (a plan may read one input twice). */
export function lower(n: PlanNode, done = new Map<PlanNode, Frame>()): Frame {
  const had = done.get(n)
  if (had) return had
  const f = lowerNode(n, done)
  done.set(n, f)
  return f
}

function lowerNode(n: PlanNode, done: Map<PlanNode, Frame>): Frame {
  if (n.frame) return n.frame as Frame
  switch (n.op) {
    case 'frame':
      return n.frame as Frame
    case 'scan':
      return readParquet(n.paths, n.options)
    case 'filter':
      return lower(n.input, done).filter(new Expr(n.predicate))
    case 'select':
      return lower(n.input, done).select(...n.exprs.map((e) => new Expr(e)))
    case 'join':
      return joinFrames(lower(n.left, done), lower(n.right, done), n.options as JoinOptions)
    case 'sort':
      return sortFrame(lower(n.input, done), [...n.keys], n.options as SortOptions)
    case 'aggregate': {
      const aggs = Object.fromEntries(n.aggs.map((a) => [a.name, new Aggregate(a.func as Aggregate['func'], a.column, a.expr)]))
      return new GroupBy(lower(n.input, done), [...n.keys]).agg(aggs, n.options)
    }
  }
}

const sameColumns = (a: Frame, b: Frame) => a.fields.length === b.fields.length && a.fields.every((x, i) => x.name === b.fields[i].name && x.type === b.fields[i].type)

/** Each frame's optimized frame, once: lowering plans a narrowed Parquet scan again, reading its footers, and a frame computed twice (or a slice's partitions one by one) would do it each time. */
const LOWERED = new WeakMap<Frame, Frame>()

/** `frame` as its optimized plan lowers it; the frame itself where nothing changed. */
export function optimizedFrame<F>(frame: F): F {
  const f = frame as Frame
  const had = LOWERED.get(f)
  if (had) return had as F
  const plan = planOf(f)
  const better = plan.op === 'frame' ? plan : optimizePlan(plan)
  const out = better === plan ? f : lower(better)
  // The rules keep the output's columns; where a bug of theirs would not, the frame runs as written.
  const chosen = sameColumns(out, f) ? out : f
  LOWERED.set(f, chosen)
  return chosen as F
}

usePlanner({
  optimized: optimizedFrame,
  explain: (frame) => {
    const done = new Map<PlanNode, Frame>()
    return explainPlan(optimizePlan(planOf(frame)), (n) => lower(n, done))
  },
})
