// A frame's logical plan: what each method was asked for, as plain nodes
// over its inputs' nodes, kept beside the frame as written (its tasks). The
// optimizer (optimize.ts) rewrites a plan and lower.ts turns it back into a
// frame by calling the same methods on the rewritten inputs, as dask-expr
// lowers its expressions. A frame made any other way (mapBatches, a shuffle,
// readText…) is a leaf: the frame as it is, which the rules do not see into.
//
// The nodes live in a WeakMap beside the frames rather than on them: the
// frames know nothing of plans, and a plan's leaves are frames.

import type { ExprData, FieldSpec } from '../../wire/frame'

interface Common {
  /** The columns the node gives. */
  readonly fields: readonly FieldSpec[]
  /** The frame as written, on a node the optimizer left as it was (lowering gives it back as is). */
  readonly frame?: object
}

export interface LeafNode extends Common {
  readonly op: 'frame'
  readonly frame: object
}
/** readParquet's call: re-read with fewer `columns` where fewer are needed. */
export interface ScanNode extends Common {
  readonly op: 'scan'
  readonly paths: string | string[]
  readonly options: object
  /** The columns it reads, in order (options.columns, or every column of the files). */
  readonly columns: readonly string[]
}
export interface FilterNode extends Common {
  readonly op: 'filter'
  readonly input: PlanNode
  readonly predicate: ExprData
}
export interface SelectNode extends Common {
  readonly op: 'select'
  readonly input: PlanNode
  readonly exprs: readonly ExprData[]
}
export interface JoinNode extends Common {
  readonly op: 'join'
  readonly left: PlanNode
  readonly right: PlanNode
  readonly options: object
}
/** An aggregate as groupBy(...).agg({ name: … }) takes it, as plain data. */
export interface AggregateData {
  name: string
  func: string
  column?: string
  expr?: ExprData
}
export interface AggregateNode extends Common {
  readonly op: 'aggregate'
  readonly input: PlanNode
  readonly keys: readonly string[]
  readonly aggs: readonly AggregateData[]
  readonly options: object
}
export interface SortNode extends Common {
  readonly op: 'sort'
  readonly input: PlanNode
  readonly keys: readonly string[]
  readonly options: object
}

export type PlanNode = LeafNode | ScanNode | FilterNode | SelectNode | JoinNode | AggregateNode | SortNode

/** What plans need of a frame: its columns. */
interface Planned {
  readonly fields: readonly FieldSpec[]
}

/** A node as a method records it: its fields and frame are the frame's. */
type Recorded = PlanNode extends infer N ? (N extends PlanNode ? Omit<N, 'fields' | 'frame'> : never) : never

const PLANS = new WeakMap<object, PlanNode>()

/** `frame`, with the node that made it recorded; returns the frame. */
export function recorded<F extends Planned>(frame: F, node: Recorded): F {
  PLANS.set(frame, { ...node, fields: frame.fields, frame } as PlanNode)
  return frame
}

/** The frame's plan: the node that made it, or the frame as a leaf. */
export function planOf(frame: Planned): PlanNode {
  return PLANS.get(frame) ?? { op: 'frame', frame, fields: frame.fields }
}

/** The node's inputs, in order. */
export function inputsOf(n: PlanNode): PlanNode[] {
  switch (n.op) {
    case 'frame':
    case 'scan':
      return []
    case 'join':
      return [n.left, n.right]
    default:
      return [n.input]
  }
}

/** What lower.ts gives frame.ts, which cannot import it (lower.ts makes frames). */
export interface Planner {
  optimized<F extends Planned>(frame: F): F
  explain(frame: Planned): string
}

let planner: Planner = { optimized: (f) => f, explain: () => 'no planner loaded' }

/** lower.ts, loaded with the package, installs itself here. */
export function usePlanner(p: Planner): void {
  planner = p
}

/** The frame as its optimized plan lowers it (the same columns, in order). */
export function optimized<F extends Planned>(frame: F): F {
  return planner.optimized(frame)
}

/** The optimized plan, as frame.explain() prints it. */
export function explained(frame: Planned): string {
  return planner.explain(frame)
}
