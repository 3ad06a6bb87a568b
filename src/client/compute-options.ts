// client.compute's options for a frame: the progress bar and signal of every
// compute, and whether the frame runs as its optimized plan.

import { ArgumentError } from '../base/errors'
import type { Frame } from '../frame/frame'
import { optimized } from '../frame/plan/node'
import type { ProgressOption } from './progress'

export interface FrameComputeOptions extends ProgressOption {
  /** Run the frame's optimized plan (default true; frame.explain() prints it), or false: each method as written. */
  optimize?: boolean
}

/** The frame as `options.optimize` asks it to run. */
export function optimizeOption(options: FrameComputeOptions): (f: Frame) => Frame {
  const o = options?.optimize ?? true
  if (typeof o !== 'boolean') throw new ArgumentError([{ field: 'options.optimize', value: o, allowed: 'true (default: the optimized plan) or false (each method as written)' }], 'compute options')
  return o ? optimized : (f) => f
}
