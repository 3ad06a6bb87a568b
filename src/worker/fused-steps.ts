// A run of per-item steps (map, filter, pluck) applied in one iterator:
// each item goes through every step in a loop, where a generator per step
// cost a resume per item per step. Used for a partition's steps when they
// are only those (the common case: readText(...).map(...).filter(...)).

import type { Step } from '../wire/bag'

type Fn = (v: unknown) => unknown

const MAP = 0
const FILTER = 1
const PLUCK = 2

/** Whether a step is one the fused iterator applies. */
export function isItemStep(s: Step): boolean {
  return s.op === 'map' || s.op === 'filter' || s.op === 'pluck'
}

class FusedSteps implements IterableIterator<unknown> {
  readonly #source: Iterator<unknown>
  readonly #ops: number[]
  readonly #fns: (Fn | undefined)[]
  readonly #fields: (string | number | undefined)[]

  constructor(source: Iterable<unknown>, steps: Step[], fns: (Fn | undefined)[]) {
    this.#source = source[Symbol.iterator]()
    this.#ops = steps.map((s) => (s.op === 'map' ? MAP : s.op === 'filter' ? FILTER : PLUCK))
    this.#fns = fns
    this.#fields = steps.map((s) => ('field' in s ? s.field : undefined))
  }

  [Symbol.iterator](): this {
    return this
  }

  next(): IteratorResult<unknown> {
    const ops = this.#ops
    next: for (;;) {
      const r = this.#source.next()
      if (r.done) return r
      let v = r.value
      for (let i = 0; i < ops.length; i++) {
        const op = ops[i]
        if (op === MAP) v = this.#fns[i]!(v)
        else if (op === FILTER) {
          if (!this.#fns[i]!(v)) continue next
        } else v = (v as any)?.[this.#fields[i]!]
      }
      return { value: v, done: false }
    }
  }
}

/** The items with the steps (each isItemStep) applied, lazily, in order. */
export function fusedSteps(items: Iterable<unknown>, steps: Step[], fns: (Fn | undefined)[]): Iterable<unknown> {
  return new FusedSteps(items, steps, fns)
}
