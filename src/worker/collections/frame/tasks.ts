// A frame's two task kinds as the worker runs them: each hands its plan and
// its inputs' IPC bytes to the core (off the JS thread) and returns the IPC
// bytes of its output, which the worker stores as they are (raw bytes in its
// SpillBuffer: counted in managed memory, spilled compressed).

import { callNative, ownTaskError, SpillwayError } from '../../../base/errors'
import { native } from '../../../native/binding'
import type { CombinePlan, FrameWritePlan, PartitionPlan } from '../../../wire/frame'

export function ipcOf(v: unknown, i: number): Buffer {
  if (!ArrayBuffer.isView(v)) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `a frame task's input ${i} is ${v === null ? 'null' : typeof v}, not a partition's IPC bytes`)
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength)
}

/** The core's coded errors keep their code as the task's error. */
export async function run(call: () => Promise<Buffer>): Promise<Buffer> {
  try {
    return await callNative(call)
  } catch (e) {
    if (e instanceof SpillwayError) throw ownTaskError(e.code, e.message, e.details as Record<string, unknown>)
    throw e
  }
}

export function runFramePartition(plan: PartitionPlan, ...inputs: unknown[]): Promise<Buffer> {
  const bytes = inputs.map(ipcOf)
  return run(() => native.frameRunPartition(JSON.stringify(plan), bytes))
}

export function runFrameCombine(plan: CombinePlan, ...inputs: unknown[]): Promise<Buffer> {
  const bytes = inputs.map(ipcOf)
  return run(() => native.frameRunCombine(JSON.stringify(plan), bytes))
}

/** A partition written to its file by the core; a bag partition of the one path written. */
export async function runFrameWrite(plan: FrameWritePlan, input: unknown): Promise<string[]> {
  const bytes = ipcOf(input, 0)
  const path = await run(() => native.frameWritePartition(JSON.stringify(plan), [bytes]))
  return [path.toString('utf8')]
}
