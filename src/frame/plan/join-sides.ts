// A join node's options as the rules read them, and which side each output
// column comes from (the same naming as join.ts's joinColumns).

import type { FieldSpec } from '../../wire/frame'
import type { JoinColumn, JoinHow } from '../../wire/frame-shuffle'
import { joinColumns } from '../join'
import type { JoinNode } from './node'

export interface JoinShape {
  leftOn: string[]
  rightOn: string[]
  shared: boolean
  how: JoinHow
  suffix: string
}

const list = (v: unknown): string[] => (typeof v === 'string' ? [v] : (v as string[]))

/** The join's keys and kind, from options joinFrames already checked. */
export function shapeOf(n: JoinNode): JoinShape {
  const o = n.options as Record<string, unknown>
  const shared = o.on !== undefined
  return {
    leftOn: list(shared ? o.on : o.leftOn),
    rightOn: list(shared ? o.on : o.rightOn),
    shared,
    how: (o.how as JoinHow | undefined) ?? 'inner',
    suffix: (o.suffix as string | undefined) ?? '_right',
  }
}

/** The output's columns, each with the side (and the side's name) it comes from. */
export function outputColumns(s: JoinShape, left: readonly FieldSpec[], right: readonly FieldSpec[]): { columns: JoinColumn[]; fields: FieldSpec[] } {
  return joinColumns(left, right, s.leftOn, s.rightOn, s.shared, s.how, s.suffix)
}

/** Output names to the side's names, for the columns that side gives (keys of `on` from both). */
export function sideNames(columns: readonly JoinColumn[], side: 'left' | 'right'): Map<string, string> {
  const names = new Map<string, string>()
  for (const c of columns) {
    if (c.from === 'key') names.set(c.name, side === 'left' ? c.left : c.right)
    else if (c.from === side) names.set(c.name, c.column)
  }
  return names
}
