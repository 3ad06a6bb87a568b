// The optimizer: the rules in order, each a pure function of a plan.
// Filters first, so that the columns a filter reads are counted where it
// lands; then the columns each node needs, from the output down.

import type { PlanNode } from './node'
import { pruneColumns } from './prune-columns'
import { pushFilters } from './push-filters'

export function optimizePlan(plan: PlanNode): PlanNode {
  return pruneColumns(pushFilters(plan), undefined)
}
