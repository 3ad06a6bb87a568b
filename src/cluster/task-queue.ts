// Tasks ready to run, highest priority first, then in submission order (a
// recomputed task goes first among its priority). Entries are checked when
// taken, so a task released or moved meanwhile is just skipped.

import type { TaskRecord } from './task-record'

function before(a: TaskRecord, b: TaskRecord): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq)
}

export class TaskQueue {
  items: TaskRecord[] = []

  get length(): number {
    return this.items.length
  }

  push(t: TaskRecord): void {
    const a = this.items
    // The common case, equal priorities in submission order, appends.
    if (a.length === 0 || !before(t, a[a.length - 1])) {
      a.push(t)
      return
    }
    let lo = 0
    let hi = a.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (before(t, a[mid])) hi = mid
      else lo = mid + 1
    }
    a.splice(lo, 0, t)
  }

  /** Puts a task back at the front of its priority (a lost task to redo). */
  pushFront(t: TaskRecord): void {
    const a = this.items
    let i = 0
    while (i < a.length && a[i].priority > t.priority) i++
    a.splice(i, 0, t)
  }

  removeAt(i: number): TaskRecord {
    return this.items.splice(i, 1)[0]
  }

  filter(keep: (t: TaskRecord) => boolean): void {
    this.items = this.items.filter(keep)
  }

  clear(): void {
    this.items = []
  }
}
