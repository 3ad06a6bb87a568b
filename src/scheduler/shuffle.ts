// The scheduler's part of the P2P shuffle: which worker owns each output
// partition. Outputs are spread over the live workers when the shuffle's
// tasks are submitted; each output's collect task is restricted to its
// owner; each split task is sent the owners' current data addresses. When
// an owner is lost its outputs move to the survivors: their collect tasks
// follow, find their shards missing and name the inputs that sent them,
// and only those run again (a shard sent twice is stored once). Bag
// shuffles and array rechunks (rechunk.split / rechunk.collect) alike.

import type { TaskSubmission } from './state'
import type { TaskRecord, WorkerHandle } from './state'
import type { CollectSpec, PartitionSpec, SplitSpec } from '../wire/bag'
import type { RechunkCollectSpec, RechunkSplitSpec } from '../wire/rechunk'
import type { TaskFn } from '../wire/protocol'

/** What the coordinator needs of the scheduler (declared here, so the two do not import each other). */
export interface ShuffleHost {
  readonly workers: Map<string, WorkerHandle>
  readonly tasks: Map<string, TaskRecord>
  on(event: 'worker-removed', fn: (w: WorkerHandle) => void): unknown
  readonly closed: boolean
}

/** Task kinds that send an input's shards, and those that read an output's (besides a bag partition reading a shuffle). */
const SPLIT_OPS = new Set(['shuffle.split', 'rechunk.split', 'frame.split'])
const COLLECT_OPS = new Set(['rechunk.collect', 'frame.collect'])

/** How often a released shuffle whose outputs still run is looked at again. */
const RECHECK_MS = 200

/** The ids of the shuffles whose inputs are among `subs` (bag shuffles and rechunks). */
export function shuffleIds(subs: TaskSubmission[]): Set<string> {
  const ids = new Set<string>()
  for (const s of subs) {
    const op = nativeOp(s.task)
    if (!SPLIT_OPS.has(op ?? '')) continue
    ids.add((((s.task as Extract<TaskFn, { fn: 'call' }>).args as unknown[])[0] as SplitSpec | RechunkSplitSpec).shuffle)
  }
  return ids
}

interface Run {
  /** The id its tasks carry: the shuffle's own, with the run's number once an earlier run was dropped. */
  runId: string
  /** Owner of each output, by worker name (names survive restarts; addresses do not). */
  owners: string[]
  collects: Map<number, string>
}

const coordinators = new WeakMap<ShuffleHost, ShuffleCoordinator>()

export function shufflesOf(host: ShuffleHost): ShuffleCoordinator {
  let c = coordinators.get(host)
  if (!c) coordinators.set(host, (c = new ShuffleCoordinator(host)))
  return c
}

function nativeOp(task: TaskFn | undefined): string | undefined {
  return task?.fn === 'call' && task.func.kind === 'native' ? task.func.op : undefined
}

/** Which output of which shuffle a task reads: a bag partition that reads one, or a rechunk's new chunk. */
function collectOf(task: TaskFn | undefined): Pick<CollectSpec, 'shuffle' | 'output' | 'npartitions'> | undefined {
  const op = nativeOp(task)
  if (op !== 'bag.partition' && !COLLECT_OPS.has(op ?? '')) return undefined
  const spec = ((task as Extract<TaskFn, { fn: 'call' }>).args as unknown[])[0] as PartitionSpec | RechunkCollectSpec | undefined
  if (op !== 'bag.partition') return spec as RechunkCollectSpec | undefined
  const source = (spec as PartitionSpec | undefined)?.source
  return source?.kind === 'shuffle' ? source.collect : undefined
}

export class ShuffleCoordinator {
  readonly #runs = new Map<string, Run>()
  /** Runs dropped so far, per shuffle id. */
  readonly #epochs = new Map<string, number>()

  constructor(private readonly host: ShuffleHost) {
    host.on('worker-removed', (w) => this.#moveFrom(w.name))
  }

  #live(): WorkerHandle[] {
    return [...this.host.workers.values()].filter((w) => w.alive)
  }

  #run(id: string, n: number): Run {
    let run = this.#runs.get(id)
    if (!run) {
      const names = [...new Set(this.#live().map((w) => w.name))].sort()
      // No worker yet: the first to come takes them all (moved as others join and leave).
      const epoch = this.#epochs.get(id) ?? 0
      run = { runId: epoch ? `${id}e${epoch}` : id, owners: Array.from({ length: n }, (_, p) => names[p % Math.max(1, names.length)] ?? ''), collects: new Map() }
      this.#runs.set(id, run)
    }
    return run
  }

  /** Restricts each collect task to its output's owner (the shuffle's owners chosen now, if not yet). */
  prepare(subs: TaskSubmission[]): TaskSubmission[] {
    return subs.map((s) => {
      const c = collectOf(s.task)
      if (!c) return s
      const run = this.#run(c.shuffle, c.npartitions)
      run.collects.set(c.output, s.key)
      const owner = run.owners[c.output] || this.#leastLoaded(run)
      run.owners[c.output] = owner
      return owner ? { ...s, workers: [owner] } : s
    })
  }

  #leastLoaded(run: Run): string {
    const names = [...new Set(this.#live().map((w) => w.name))]
    if (!names.length) return ''
    const load = new Map(names.map((n) => [n, 0]))
    for (const o of run.owners) if (load.has(o)) load.set(o, load.get(o)! + 1)
    return names.sort((a, b) => load.get(a)! - load.get(b)! || (a < b ? -1 : 1))[0]
  }

  #moveFrom(name: string): void {
    for (const run of this.#runs.values()) {
      for (let p = 0; p < run.owners.length; p++) {
        if (run.owners[p] !== name) continue
        // Marked free first so the least loaded survivor is chosen among the others.
        run.owners[p] = ''
        const next = this.#leastLoaded(run)
        if (!next) continue
        run.owners[p] = next
        const t = this.host.tasks.get(run.collects.get(p) ?? '')
        if (t) t.restrict = new Set([next])
      }
    }
  }

  /**
   * Drops the shards of every shuffle among `subs` that no output will read
   * any more (each output ran, failed or was let go of), on every worker.
   */
  dropUnread(subs: TaskSubmission[]): void {
    for (const id of shuffleIds(subs)) this.#dropIfUnread(id)
  }

  /** Whether the run was dropped (or is gone): no output of it waits or runs. */
  #dropIfUnread(id: string): boolean {
    const run = this.#runs.get(id)
    if (!run) return true
    const live = [...run.collects.values()].some((k) => {
      const st = this.host.tasks.get(k)?.state
      return st === 'waiting' || st === 'queued' || st === 'processing'
    })
    if (live) return false
    this.#runs.delete(id)
    this.#epochs.set(id, (this.#epochs.get(id) ?? 0) + 1)
    for (const w of this.#live()) w.rpc.request({ op: 'shuffle-drop', shuffle: run.runId }).catch(() => {})
    return true
  }

  /**
   * A persisted collection let go of midway: its shuffles' shards are
   * dropped on every worker as soon as none of their outputs runs (one
   * already running finishes first; its value is freed as nobody holds it).
   */
  dropWhenUnread(ids: Iterable<string>): void {
    const pending = [...ids].filter((id) => !this.#dropIfUnread(id))
    if (!pending.length || this.host.closed) return
    setTimeout(() => this.dropWhenUnread(pending), RECHECK_MS).unref()
  }

  /** The task as sent to a worker: a split learns where each output's owner listens now. */
  taskToSend(t: TaskRecord): TaskFn {
    const task = t.task!
    const collect = collectOf(task)
    if (collect) {
      const run = this.#run(collect.shuffle, collect.npartitions)
      if (run.runId === collect.shuffle) return task
      const call = task as Extract<TaskFn, { fn: 'call' }>
      const [spec, ...rest] = call.args as [PartitionSpec | RechunkCollectSpec, ...unknown[]]
      const renamed = COLLECT_OPS.has(nativeOp(task) ?? '') ? { ...spec, shuffle: run.runId } : { ...spec, source: { kind: 'shuffle', collect: { ...collect, shuffle: run.runId } } }
      return { ...call, args: [renamed, ...rest] }
    }
    const op = nativeOp(task)
    if (!SPLIT_OPS.has(op ?? '')) return task
    const call = task as Extract<TaskFn, { fn: 'call' }>
    const args = call.args as unknown[]
    const spec = args[0] as SplitSpec | RechunkSplitSpec
    const run = this.#run(spec.shuffle, spec.npartitions)
    const owners = run.owners.map((name, p) => {
      let w = this.#live().find((h) => h.name === name)
      if (!w) {
        run.owners[p] = this.#leastLoaded(run)
        w = this.#live().find((h) => h.name === run.owners[p])
        const c = this.host.tasks.get(run.collects.get(p) ?? '')
        if (c && w) c.restrict = new Set([w.name])
      }
      return w?.dataAddress ?? ''
    })
    return { ...call, args: [{ ...spec, shuffle: run.runId, owners }, ...args.slice(1)] }
  }
}
