// Copies of a value on workers besides its holder (replicate, broadcast,
// and the copy a move makes before the holder lets go). The holder
// (`TaskRecord.worker`) is the copy the scheduler reads and frees first; a
// replica takes over should the holder be lost or unable to read it back,
// so a replicated value is never recomputed while one copy lives.

import type { TaskRecord, WorkerHandle } from './state'

/** What this needs of the scheduler: freeing a key on one worker. */
export interface ReplicaHost {
  releaseCopy(w: WorkerHandle, key: string): void
}

export function holders(t: TaskRecord): WorkerHandle[] {
  const out = t.worker ? [t.worker] : []
  if (t.replicas) for (const r of t.replicas) if (r.alive) out.push(r)
  return out
}

export function addReplica(t: TaskRecord, w: WorkerHandle): void {
  if (t.worker === w) return
  ;(t.replicas ??= new Set()).add(w)
  w.replicas.add(t)
}

export function dropReplica(t: TaskRecord, w: WorkerHandle): void {
  t.replicas?.delete(w)
  w.replicas.delete(t)
  if (t.replicas?.size === 0) t.replicas = undefined
}

/** Whether `to` can become the holder of the copy it took of `t` from `from`: it still has it, `from` still holds it, and `to` is staying. */
export function canTakeOver(t: TaskRecord, from: WorkerHandle, to: WorkerHandle): boolean {
  return t.worker === from && t.state === 'memory' && Boolean(t.replicas?.has(to)) && to.alive && !to.retiring && !to.closing
}

/** `to` becomes the value's holder (it has a copy); the old holder's copy is freed. */
export function moveHolder(host: ReplicaHost, t: TaskRecord, to: WorkerHandle): void {
  const from = t.worker
  if (from === to) return
  dropReplica(t, to)
  if (from) {
    from.held.delete(t)
    from.heldBytes -= t.nbytes
    host.releaseCopy(from, t.key)
  }
  t.worker = to
  to.held.add(t)
  to.heldBytes += t.nbytes
}

/** A live replica becomes the holder of a value whose holder is gone (t.worker already cleared); false when there is none. */
export function promoteReplica(t: TaskRecord): boolean {
  if (!t.replicas) return false
  for (const r of t.replicas) {
    dropReplica(t, r)
    if (!r.alive || r.closing) continue
    t.worker = r
    r.held.add(t)
    r.heldBytes += t.nbytes
    return true
  }
  return false
}

/** Frees every replica of a value (its holder's copy is the caller's). */
export function releaseReplicas(host: ReplicaHost, t: TaskRecord): void {
  if (!t.replicas) return
  for (const r of [...t.replicas]) {
    dropReplica(t, r)
    host.releaseCopy(r, t.key)
  }
}

/** A worker is gone: it holds no replica any more. */
export function forgetReplicasOn(w: WorkerHandle): void {
  for (const t of [...w.replicas]) dropReplica(t, w)
}
