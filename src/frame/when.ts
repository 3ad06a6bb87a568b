// `when(cond).then(a).otherwise(b)`: SQL's CASE WHEN, as nodejs-polars
// names it. `.when(...)` after a `then` adds another branch (tried in
// order); without `otherwise` the value is null where no condition holds.
// A null condition is not true. The branches are read as one type, as
// fillNull's sides (integers as int64, any float as float64).

import { ArgumentError } from '../base/errors'
import type { ExprData } from '../wire/frame'
import { Expr, exprOf, type LitValue } from './expr'

const NULL: ExprData = { op: 'lit', value: null, type: 'null' }

function condOf(cond: unknown, what: string): ExprData {
  if (cond instanceof Expr) return cond.data
  if (typeof cond === 'boolean') return { op: 'lit', value: cond, type: 'bool' }
  throw new ArgumentError([{ field: 'cond', value: cond, allowed: "a boolean expression, such as col('x').gt(0)" }], what)
}

/** A condition waiting for its value (`then`). */
export class When {
  readonly #cond: ExprData
  readonly #outer: (inner: ExprData) => ExprData

  constructor(cond: ExprData, outer: (inner: ExprData) => ExprData = (x) => x) {
    this.#cond = cond
    this.#outer = outer
  }

  then(value: Expr | LitValue): Then {
    const cond = this.#cond
    const thenData = exprOf(value, 'then').data
    const outer = this.#outer
    return new Then((otherwise) => outer({ op: 'when', cond, then: thenData, otherwise }))
  }
}

/** Branches so far: an expression already (null where none holds), or go on with `when` or `otherwise`. */
export class Then extends Expr {
  readonly #close: (otherwise: ExprData) => ExprData

  constructor(close: (otherwise: ExprData) => ExprData) {
    super(close(NULL))
    this.#close = close
  }

  /** Another branch, tried where the ones before did not hold. */
  when(cond: Expr | boolean): When {
    return new When(condOf(cond, 'when'), this.#close)
  }

  /** The value where no condition holds. */
  otherwise(value: Expr | LitValue): Expr {
    return new Expr(this.#close(exprOf(value, 'otherwise').data))
  }
}

/** SQL's CASE WHEN: `when(col('qty').gt(10)).then('bulk').otherwise('single')`. */
export function when(cond: Expr | boolean): When {
  return new When(condOf(cond, 'when'))
}
