// Items gathered by key in a shuffle's output task (groupBy's groups, a
// join's right side), keys equal by the rule of wire/key-equality.ts. Most
// keys are strings or numbers, which a Map compares by that rule as they
// are (SameValueZero): those go straight into one Map, holding the very
// [key, value] pair the output is made of, with no entry object per key
// and no iterator to copy them out. Other keys go through a KeyTable.

import { isPrimitiveKey, KeyTable } from '../../../wire/key-equality'

export class KeyGroups<V> {
  /** Every group as [first key seen, value], in the order keys were first seen. */
  readonly pairs: [unknown, V][] = []
  readonly #primitive = new Map<unknown, [unknown, V]>()
  #objects: KeyTable<[unknown, V]> | undefined

  constructor(
    /** Whose keys these are, for errors: 'groupBy key', 'join key'. */
    readonly role: string,
  ) {}

  get size(): number {
    return this.pairs.length
  }

  /** The pair of a key equal to `k`, if any. */
  find(k: unknown): [unknown, V] | undefined {
    if (isPrimitiveKey(k)) return this.#primitive.get(k)
    return (this.#objects ??= new KeyTable(this.role)).get(k)
  }

  /** A new group for `k`, which `find` did not find. */
  add(k: unknown, value: V): [unknown, V] {
    const pair: [unknown, V] = [k, value]
    if (isPrimitiveKey(k)) this.#primitive.set(k, pair)
    else (this.#objects ??= new KeyTable(this.role)).add(k, pair)
    this.pairs.push(pair)
    return pair
  }
}
