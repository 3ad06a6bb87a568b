// withColumns, drop and rename, as the select each one is (so the core has
// one column-making step and the schema follows from select's rules).

import { ArgumentError } from '../base/errors'
import { col, Expr } from './expr'
import type { FieldSpec } from '../wire/frame'
import { fieldOf } from './schema'

/** Each column as it is, or replaced, then the new ones, in the order given. */
export function withColumnsOf(fields: readonly FieldSpec[], columns: Record<string, Expr>): Expr[] {
  if (columns === null || typeof columns !== 'object' || Object.keys(columns).length === 0) throw new ArgumentError([{ field: 'columns', value: columns, allowed: "an object of names to expressions, e.g. { total: col('a').plus(col('b')) }" }], 'withColumns')
  for (const [name, e] of Object.entries(columns)) {
    if (!(e instanceof Expr)) throw new ArgumentError([{ field: `columns.${name}`, value: typeof e, allowed: 'an expression (col, lit and their methods)' }], 'withColumns')
  }
  const names = fields.map((x) => x.name)
  const kept = names.map((c) => (Object.hasOwn(columns, c) ? columns[c].alias(c) : col(c)))
  const added = Object.entries(columns).filter(([name]) => !names.includes(name)).map(([name, e]) => e.alias(name))
  return [...kept, ...added]
}

export function dropColumns(fields: readonly FieldSpec[], names: string[]): Expr[] {
  for (const n of names) fieldOf(n, fields, 'drop')
  const left = fields.map((x) => x.name).filter((c) => !names.includes(c))
  if (left.length === 0) throw new ArgumentError([{ field: 'names', value: names, allowed: 'not every column: a frame keeps at least one' }], 'drop')
  return left.map((c) => col(c))
}

export function renameColumns(fields: readonly FieldSpec[], names: Record<string, string>): Expr[] {
  if (names === null || typeof names !== 'object') throw new ArgumentError([{ field: 'names', value: names, allowed: "an object of old names to new, e.g. { n: 'count' }" }], 'rename')
  for (const [from, to] of Object.entries(names)) {
    fieldOf(from, fields, 'rename')
    if (typeof to !== 'string' || to === '') throw new ArgumentError([{ field: `names.${from}`, value: to, allowed: 'a non-empty column name' }], 'rename')
  }
  return fields.map((x) => x.name).map((c) => (Object.hasOwn(names, c) ? col(c).alias(names[c]) : col(c)))
}
