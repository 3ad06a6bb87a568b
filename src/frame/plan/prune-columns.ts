// Projection pushdown: each node asks its inputs only for the columns it and
// the nodes above it read, down to the readers: a Parquet scan is planned
// again with those columns (fewer to decode, and partitions sized by what is
// read), and a leaf frame read from files keeps only those in the same task.
// The plan's output keeps its columns; below it, a node may give fewer.

import type { ExprData } from '../../wire/frame'
import { outputName } from '../schema'
import { columnsOf, uses } from './exprs'
import { outputColumns, shapeOf } from './join-sides'
import type { AggregateData, PlanNode } from './node'

type Needed = ReadonlySet<string> | undefined

const union = (...sets: Iterable<string>[]) => new Set(sets.flatMap((s) => [...s]))
const exprColumns = (es: readonly ExprData[]) => union(...es.map((e) => columnsOf(e)))
const aggColumns = (a: AggregateData) => (a.expr ? columnsOf(a.expr) : new Set(a.column === undefined ? [] : [a.column]))

/** What a leaf frame must be for a select on it to run in its own partitions' tasks (not a task more per partition). */
export interface LeafFrame {
  readonly parts: readonly { source: { kind: string } }[]
  readonly steps: readonly unknown[]
}

/** The plan reading only the columns `needed` of its output needs (all where undefined). */
export function pruneColumns(n: PlanNode, needed: Needed): PlanNode {
  switch (n.op) {
    case 'frame': {
      const f = n.frame as LeafFrame
      const fused = f.steps.length > 0 || f.parts.every((p) => p.source.kind !== 'inputs')
      const keep = needed ? n.fields.filter((x) => needed.has(x.name)) : n.fields
      if (!fused || keep.length === n.fields.length) return n
      const exprs: ExprData[] = (keep.length > 0 ? keep : n.fields.slice(0, 1)).map((x) => ({ op: 'col', name: x.name }))
      return { op: 'select', input: n, exprs, fields: n.fields.filter((x) => exprs.some((e) => e.op === 'col' && e.name === x.name)) }
    }
    case 'scan': {
      if (!needed) return n
      const kept = n.columns.filter((c) => needed.has(c))
      if (kept.length === n.columns.length) return n
      // Rows without any column read: the first column stands in for them.
      const columns = kept.length > 0 ? kept : n.columns.slice(0, 1)
      return { op: 'scan', paths: n.paths, options: { ...n.options, columns }, columns, fields: n.fields.filter((x) => columns.includes(x.name)) }
    }
    case 'filter': {
      const input = pruneColumns(n.input, needed && union(needed, columnsOf(n.predicate)))
      return input === n.input ? n : { ...n, input, fields: input.fields, frame: undefined }
    }
    case 'sort': {
      const input = pruneColumns(n.input, needed && union(needed, n.keys))
      return input === n.input ? n : { ...n, input, fields: input.fields, frame: undefined }
    }
    case 'select': {
      // An explode sets the row count: then every expression stays.
      const wanted = needed && !n.exprs.some((e) => uses(e, 'explode')) ? n.exprs.filter((e) => needed.has(outputName(e, 'plan'))) : n.exprs
      const exprs = wanted.length > 0 ? wanted : n.exprs.slice(0, 1)
      const input = pruneColumns(n.input, exprColumns(exprs))
      if (input === n.input && exprs.length === n.exprs.length) return n
      const names = new Set(exprs.map((e) => outputName(e, 'plan')))
      return { ...n, input, exprs, fields: n.fields.filter((x) => names.has(x.name)), frame: undefined }
    }
    case 'aggregate': {
      const wanted = needed ? n.aggs.filter((a) => needed.has(a.name)) : n.aggs
      const aggs = wanted.length > 0 ? wanted : n.aggs.slice(0, 1)
      const input = pruneColumns(n.input, union(n.keys, ...aggs.map(aggColumns)))
      if (input === n.input && aggs.length === n.aggs.length) return n
      const names = new Set([...n.keys, ...aggs.map((a) => a.name)])
      return { ...n, input, aggs, fields: n.fields.filter((x) => names.has(x.name)), frame: undefined }
    }
    case 'join':
      return pruneJoin(n, needed)
  }
}

function pruneJoin(n: Extract<PlanNode, { op: 'join' }>, needed: Needed): PlanNode {
  const s = shapeOf(n)
  if (!needed) {
    const [left, right] = [pruneColumns(n.left, undefined), pruneColumns(n.right, undefined)]
    return left === n.left && right === n.right ? n : { ...n, left, right, frame: undefined }
  }
  const { columns } = outputColumns(s, n.left.fields, n.right.fields)
  const keepRight = new Set(s.rightOn)
  const keepLeft = new Set(s.leftOn)
  for (const c of columns) {
    if (!needed.has(c.name)) continue
    if (c.from === 'left') keepLeft.add(c.column)
    if (c.from === 'right') keepRight.add(c.column)
  }
  // A right column named as a left one comes out with the suffix: the left one stays, so its name does not change.
  for (const f of n.left.fields) if (keepRight.has(f.name)) keepLeft.add(f.name)
  const left = pruneColumns(n.left, keepLeft)
  const right = pruneColumns(n.right, keepRight)
  if (left === n.left && right === n.right) return n
  const after = outputColumns(s, left.fields, right.fields)
  // Suffixes go by the names present: where one kept column would come out under another name, nothing is pruned.
  const named = (cs: typeof columns) => new Map(cs.map((c) => [c.from === 'key' ? `k:${c.left}` : `${c.from}:${c.column}`, c.name]))
  const before = named(columns)
  if ([...named(after.columns)].some(([k, name]) => before.get(k) !== name)) return pruneJoin(n, undefined)
  return { ...n, left, right, fields: after.fields, frame: undefined }
}
