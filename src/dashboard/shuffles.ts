// The shuffles in flight, for the dashboard: how many of each one's inputs
// have split and sent their shards (the barrier is passed once all have),
// and how many of its outputs hold their partition. A frame's shuffle (a
// join, sortBy, frame.shuffle or group-by through it) is one as a bag's is.

import type { Scheduler } from '../scheduler/scheduler'
import type { PartitionSpec, SplitSpec } from '../wire/bag'
import type { FrameCollectSpec, FrameSplitSpec } from '../wire/frame-shuffle'

export interface ShuffleView {
  /** The shuffle's id, and what made it ('group-by', 'join', 'frequencies', ...). */
  id: string
  label: string
  inputs: { done: number; total: number }
  outputs: { done: number; total: number }
  /** Every input has sent its shards: the outputs may read them. */
  barrier: boolean
}

export function shuffleViews(s: Pick<Scheduler, 'tasks'>): ShuffleView[] {
  const views = new Map<string, ShuffleView>()
  const view = (id: string, label: string) => {
    let v = views.get(id)
    if (!v) views.set(id, (v = { id, label, inputs: { done: 0, total: 0 }, outputs: { done: 0, total: 0 }, barrier: false }))
    if (label && !v.label) v.label = label
    return v
  }
  for (const t of s.tasks.values()) {
    const task = t.task
    if (task?.fn !== 'call' || task.func.kind !== 'native') continue
    const spec = (task.args as unknown[])[0]
    if (task.func.op === 'shuffle.split' || task.func.op === 'frame.split') {
      const v = view((spec as SplitSpec | FrameSplitSpec).shuffle, t.group.replace(/-split$/, ''))
      v.inputs.total++
      if (t.state === 'memory') v.inputs.done++
    } else if (task.func.op === 'bag.partition' && (spec as PartitionSpec).source.kind === 'shuffle') {
      const c = ((spec as PartitionSpec).source as Extract<PartitionSpec['source'], { kind: 'shuffle' }>).collect
      const v = view(c.shuffle, '')
      v.outputs.total = Math.max(v.outputs.total, c.npartitions)
      if (t.state === 'memory') v.outputs.done++
    } else if (task.func.op === 'frame.collect') {
      const c = spec as FrameCollectSpec
      const v = view(c.shuffle, t.group)
      v.outputs.total = Math.max(v.outputs.total, c.npartitions)
      if (t.state === 'memory') v.outputs.done++
    }
  }
  for (const v of views.values()) v.barrier = v.inputs.total > 0 && v.inputs.done === v.inputs.total
  return [...views.values()]
}
