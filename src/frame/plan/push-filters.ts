// Predicate pushdown: each filter moves as far toward the readers as its
// columns allow, so fewer rows are read, shuffled and joined, and a filter
// that reaches a Parquet scan prunes its row groups by their statistics.
// A filter's conjuncts move one by one: through a projection that passes
// their columns on (renamed back where aliased), a sort, a group-by whose
// keys are all they read, a join to the side(s) whose rows they test (the
// preserved side of an outer join only), and into the filter below (the two
// merged, so a scan sees both). Only a conjunct that cannot fail moves
// (exprs.ts): below a join it sees rows the join would have dropped.

import type { ExprData } from '../../wire/frame'
import { outputName } from '../schema'
import { allOf, cannotFail, columnsOf, conjuncts, renamed, uses } from './exprs'
import { outputColumns, shapeOf, sideNames } from './join-sides'
import type { FilterNode, PlanNode } from './node'

/** The plan with its filters pushed down (the same rows, in the same order). */
export function pushFilters(n: PlanNode): PlanNode {
  switch (n.op) {
    case 'frame':
    case 'scan':
      return n
    case 'filter': {
      const input = pushFilters(n.input)
      return conjuncts(n.predicate).reduce((below, c) => sink(c, below), input)
    }
    case 'join': {
      const [left, right] = [pushFilters(n.left), pushFilters(n.right)]
      return left === n.left && right === n.right ? n : { ...n, left, right, frame: undefined }
    }
    default: {
      const input = pushFilters(n.input)
      return input === n.input ? n : ({ ...n, input, frame: undefined } as PlanNode)
    }
  }
}

function filterOf(predicate: ExprData, input: PlanNode): FilterNode {
  return { op: 'filter', input, predicate, fields: input.fields }
}

/** `filter(pred)` over `input`, as far down as it goes. */
function sink(pred: ExprData, input: PlanNode): PlanNode {
  const cols = columnsOf(pred)
  if (!cannotFail(pred, input.fields)) return filterOf(pred, input)
  switch (input.op) {
    case 'filter':
      // Merged: a Parquet scan prunes and filters by the first step only.
      if (cannotFail(input.predicate, input.input.fields)) return sink(allOf([input.predicate, pred]), input.input)
      return filterOf(pred, input)
    case 'sort':
      return { ...input, input: sink(pred, input.input), frame: undefined }
    case 'select': {
      const names = new Map<string, string>()
      for (const c of cols) {
        const e = input.exprs.find((x) => outputName(x, 'plan') === c)
        const inner = e?.op === 'alias' ? e.expr : e
        if (inner?.op !== 'col') return filterOf(pred, input)
        names.set(c, inner.name)
      }
      if (input.exprs.some((x) => uses(x, 'explode'))) return filterOf(pred, input)
      return { ...input, input: sink(renamed(pred, names), input.input), frame: undefined }
    }
    case 'aggregate':
      // Groups whose keys fail the test, gone before or after: the same (not for one group of every row).
      if (input.keys.length === 0 || cols.size === 0 || ![...cols].every((c) => input.keys.includes(c))) return filterOf(pred, input)
      return { ...input, input: sink(pred, input.input), frame: undefined }
    case 'join':
      return sinkIntoJoin(pred, cols, input)
    default:
      return filterOf(pred, input)
  }
}

function sinkIntoJoin(pred: ExprData, cols: Set<string>, j: Extract<PlanNode, { op: 'join' }>): PlanNode {
  const shape = shapeOf(j)
  const { columns } = outputColumns(shape, j.left.fields, j.right.fields)
  const onSide = (side: 'left' | 'right') => {
    const names = sideNames(columns, side)
    return cols.size > 0 && [...cols].every((c) => names.has(c)) ? names : undefined
  }
  // A side whose rows all come out (or none, for lack of a match) may lose rows first; an outer join's missing side may not.
  const toLeft = ['inner', 'left', 'semi', 'anti'].includes(shape.how) ? onSide('left') : undefined
  const toRight = ['inner', 'right'].includes(shape.how) ? onSide('right') : undefined
  if (!toLeft && !toRight) return filterOf(pred, j)
  // A test of `on` keys alone holds on both sides of an inner join's matches: both filtered.
  const both = shape.how === 'inner' && toLeft && toRight
  const left = toLeft ? sink(renamed(pred, toLeft), j.left) : j.left
  const right = toRight && (both || !toLeft) ? sink(renamed(pred, toRight), j.right) : j.right
  return { ...j, left, right, frame: undefined }
}
