// A partition's items are pushed from its source through its per-item
// steps into its reduction: one function call per item per step, fused
// into closures, where a chain of generators cost a resume and an iterator
// result per item per step (half the time of a cheap map/filter/count, and
// much of the young generation's garbage). Steps that take the items as a
// whole (mapPartitions, write, a custom reduction) still get an iterable.

/** Takes one item. */
export type Sink = (item: unknown) => void

/** Items a source pushes with a plain loop (a text block's lines), and that can still be iterated once. */
export class PushItems implements Iterable<unknown> {
  constructor(
    readonly each: (sink: Sink) => void,
    private readonly iterate: () => Iterator<unknown>,
  ) {}

  [Symbol.iterator](): Iterator<unknown> {
    return this.iterate()
  }
}

/** Pushes every item of `items` into `sink`, in order. */
export function eachItem(items: Iterable<unknown>, sink: Sink): void {
  if (items instanceof PushItems) return items.each(sink)
  // Indexed: the same items a for-of gives, without an iterator.
  if (Array.isArray(items) && Object.getPrototypeOf(items) === Array.prototype) {
    for (let i = 0; i < items.length; i++) sink(items[i])
    return
  }
  for (const v of items) sink(v)
}
