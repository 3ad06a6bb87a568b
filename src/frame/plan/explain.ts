// frame.explain(): the optimized plan as an indented tree, the output at the
// top, each node with what it does, the strategy its lowering chose and why,
// and its partitions; a scan with the columns it reads of the files'.

import { describeExpr } from '../expr'
import type { Frame } from '../frame'
import { aggStrategy } from '../group-by'
import { joinStrategy } from '../join'
import { outputName } from '../schema'
import type { ExprData } from '../../wire/frame'
import { shapeOf } from './join-sides'
import { inputsOf, type PlanNode } from './node'

const names = (xs: readonly string[]) => `[${xs.join(', ')}]`
const exprText = (e: ExprData) => (e.op === 'col' ? e.name : `${outputName(e, 'explain')} = ${describeExpr(e)}`)
const parts = (f: Frame) => `${f.npartitions} partition${f.npartitions === 1 ? '' : 's'}`

function line(n: PlanNode, frameOf: (n: PlanNode) => Frame): string {
  const f = frameOf(n)
  switch (n.op) {
    case 'frame':
      return `${f.label}: ${parts(f)}, columns ${names(f.columns)}`
    case 'scan': {
      // What the footers say, before any filter: rows, and the columns' bytes once read.
      const rows = f.parts.reduce((s, p) => s + (p.rows ?? 0), 0)
      const bytes = f.parts.reduce((s, p) => s + (p.bytes ?? 0), 0)
      return `read-parquet ${typeof n.paths === 'string' ? n.paths : `${n.paths.length} paths`}: columns ${names(n.columns)}, ${parts(f)}, ${rows} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB in memory`
    }
    case 'filter':
      return `filter ${describeExpr(n.predicate)}`
    case 'select':
      return `select ${n.exprs.map(exprText).join(', ')}`
    case 'sort':
      return `sort by ${names(n.keys)}: ${parts(f)}`
    case 'join': {
      const s = shapeOf(n)
      const on = s.shared ? names(s.leftOn) : `${names(s.leftOn)} = ${names(s.rightOn)}`
      const [l, r] = [frameOf(n.left), frameOf(n.right)]
      const st = joinStrategy(l, r, s.how, (n.options as { broadcastBytes?: number }).broadcastBytes)
      const how = st.broadcast ? `broadcast the ${st.broadcast} side (${st.why})` : `shuffle both sides into ${parts(f)} (${st.why})`
      return `join ${s.how} on ${on}: ${how}`
    }
    case 'aggregate': {
      const input = frameOf(n.input)
      const aggs = n.aggs.map((a) => `${a.name} = ${a.func}(${a.expr ? describeExpr(a.expr) : (a.column ?? '')})`).join(', ')
      const st = aggStrategy(input.npartitions, n.keys.length, n.options)
      const how = st.shuffled ? `shuffle into ${st.splitOut} (${input.npartitions} partitions, more than splitEvery ${st.splitEvery})` : `tree of ${input.npartitions} partial state${input.npartitions === 1 ? '' : 's'} into ${st.splitOut}`
      return `aggregate${n.keys.length > 0 ? ` by ${names(n.keys)}` : ''}: ${aggs}: ${how}`
    }
  }
}

/** The plan as text, `frameOf` giving each node's lowered frame. */
export function explainPlan(plan: PlanNode, frameOf: (n: PlanNode) => Frame): string {
  const out: string[] = []
  const walk = (n: PlanNode, depth: number) => {
    out.push(`${'  '.repeat(depth)}${line(n, frameOf)}`)
    for (const i of inputsOf(n)) walk(i, depth + 1)
  }
  walk(plan, 0)
  return out.join('\n')
}
