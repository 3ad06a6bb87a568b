// Tasks ready to run, highest priority first, then in submission order (a
// recomputed task goes first among its priority). Entries are checked when
// taken, so a task released or moved meanwhile is just skipped.

import type { TaskRecord } from './state'

function before(a: TaskRecord, b: TaskRecord): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq)
}

export class TaskQueue {
  #items: TaskRecord[] = []
  // Taking from the front is the common case: moving an index instead of
  // the array keeps it O(1) on long queues.
  #head = 0

  get length(): number {
    return this.#items.length - this.#head
  }

  at(i: number): TaskRecord {
    return this.#items[this.#head + i]
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
  }

  push(t: TaskRecord): void {
    const a = this.#items
    // The common case, equal priorities in submission order, appends.
    if (a.length === this.#head || !before(t, a[a.length - 1])) {
      a.push(t)
      return
    }
    let lo = this.#head
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
    const a = this.#items
    let i = this.#head
    while (i < a.length && a[i].priority > t.priority) i++
    if (i === this.#head && this.#head > 0) a[--this.#head] = t
    else a.splice(i, 0, t)
  }

  removeAt(i: number): TaskRecord {
    if (i === 0) {
      const t = this.#items[this.#head]
      this.#items[this.#head++] = undefined as unknown as TaskRecord
      this.#compact()
      return t
    }
    return this.#items.splice(this.#head + i, 1)[0]
  }

  clear(): void {
    this.#items = []
    this.#head = 0
  }
}
