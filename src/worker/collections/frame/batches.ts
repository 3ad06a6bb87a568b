// The frame tasks that cross into JavaScript on the worker: the user's
// mapBatches function over a partition as an apache-arrow Table, a
// partition's rows as plain objects (toBag), and a bag partition's items as
// Arrow columns (bag.toFrame). Their outputs are IPC bytes (stored raw in
// the SpillBuffer, as the core's) or an array of items (as a bag's).

import * as arrow from 'apache-arrow'
import { tableFromIPC, tableToIPC, Table, vectorFromArray, type Vector } from 'apache-arrow'
import { ownTaskError } from '../../../base/errors'
import { arrowType, typeName } from '../../../wire/arrow-types'
import type { FieldSpec } from '../../../wire/frame'
import type { FromItemsSpec, MapBatchesSpec, ToBagSpec } from '../../../wire/frame-js'
import { callInTask } from '../../context'
import { arrowOf, filled, kindName, kindOf, unify, type Kind } from './infer-items'
import type { FunctionLoader } from '../bag/partition'

const fail = (message: string, details: Record<string, unknown> = {}) => ownTaskError('ERR_SPILLWAY_FRAME', message, details)

function ipcOf(v: unknown): Uint8Array {
  if (!ArrayBuffer.isView(v)) throw ownTaskError('ERR_SPILLWAY_PROTOCOL', `a frame task's input is ${v === null ? 'null' : typeof v}, not a partition's IPC bytes`)
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
}

const columnsOf = (t: Table): string => t.schema.fields.map((f) => `${f.name}: ${typeName(f.type)}`).join(', ')

/** Dictionary-encoded strings (tableFromArrays makes them) as plain utf8, which the core's kernels read. */
function plain(t: Table): Table {
  if (!t.schema.fields.some((f) => arrow.DataType.isDictionary(f.type))) return t
  const cols: Record<string, Vector> = {}
  t.schema.fields.forEach((f, j) => {
    const v = t.getChildAt(j)!
    cols[f.name] = arrow.DataType.isDictionary(f.type) ? vectorFromArray([...v], f.type.dictionary) : v
  })
  return new Table(cols)
}

export async function runMapBatches(load: FunctionLoader, spec: MapBatchesSpec, input: unknown): Promise<Buffer> {
  const fn = await load.get(spec.call.fn)
  const table = tableFromIPC(ipcOf(input))
  const call = (t: unknown) => fn(t, arrow)
  const out = await (load.task ? callInTask(load.task, call, table) : call(table))
  const label = spec.call.fn.label === 'anonymous' ? '(anonymous)' : spec.call.fn.label
  if (!(out instanceof Table)) {
    const what = out === null ? 'null' : typeof out === 'object' ? (out.constructor?.name ?? 'an object') : typeof out
    throw fail(`mapBatches: the function ${label} returned ${what} for partition ${spec.index}, not an apache-arrow Table; return one (build it with the second argument, the apache-arrow module: arrow.tableFromArrays({ ... }))`, { partition: spec.index })
  }
  const result = plain(out)
  if (spec.schema) checkColumns(result, spec.schema, `mapBatches: the function ${label}'s result for partition ${spec.index}`)
  return Buffer.from(tableToIPC(result, 'stream'))
}

function checkColumns(t: Table, schema: FieldSpec[], what: string): void {
  const want = schema.map((f) => `${f.name}: ${f.type}`).join(', ')
  if (columnsOf(t) !== want) throw fail(`${what} has columns { ${columnsOf(t)} }, not those of its schema { ${want} }; make them agree (cast with arrow.vectorFromArray(values, type)) or change the schema`, { columns: columnsOf(t), schema: want })
}

/** A cell as plain data: a list (an apache-arrow Vector) as an array, a struct (a StructRow) as an object, all the way down. */
function itemValue(x: unknown, int64: (x: bigint) => unknown): unknown {
  if (typeof x === 'bigint') return int64(x)
  if (x instanceof arrow.Vector) return [...x].map((y) => itemValue(y, int64))
  if (x !== null && typeof x === 'object' && !(x instanceof Date) && !ArrayBuffer.isView(x) && typeof (x as any).toJSON === 'function') {
    return Object.fromEntries(Object.entries((x as any).toJSON() as Record<string, unknown>).map(([k, y]) => [k, itemValue(y, int64)]))
  }
  return x
}

export function runToBag(spec: ToBagSpec, input: unknown): Record<string, unknown>[] {
  const t = tableFromIPC(ipcOf(input))
  const cols = t.schema.fields.map((f, j) => [f.name, t.getChildAt(j)!] as const)
  const rows: Record<string, unknown>[] = new Array(t.numRows)
  for (let i = 0; i < t.numRows; i++) {
    const row: Record<string, unknown> = {}
    for (const [name, v] of cols) {
      row[name] = itemValue(v.get(i), (x) => {
        if (spec.int64 === 'bigint') return x
        if (x > BigInt(Number.MAX_SAFE_INTEGER) || x < BigInt(Number.MIN_SAFE_INTEGER)) {
          throw fail(`toBag: column ${JSON.stringify(name)}, row ${i} of partition ${spec.index} holds ${x}, past Number.MAX_SAFE_INTEGER; use toBag({ int64: 'bigint' })`, { column: name, row: i, partition: spec.index })
        }
        return Number(x)
      })
    }
    rows[i] = row
  }
  return rows
}

/** Columns in the order the items first name them, typed by their values (nested ones as list and struct). */
function inferred(items: Record<string, unknown>[], index: number): { fields: FieldSpec[]; nested: Map<string, Kind> } {
  const kinds = new Map<string, Kind>()
  items.forEach((item, row) => {
    for (const [name, v] of Object.entries(item)) {
      const place = { column: name, row, partition: index }
      const k = kindOf(v, place, name)
      kinds.set(name, kinds.has(name) ? unify(kinds.get(name)!, k, place, name) : k)
    }
  })
  const nested = new Map([...kinds].filter(([, k]) => k.t === 'list' || k.t === 'struct'))
  return { fields: [...kinds].map(([name, k]) => ({ name, type: kindName(k), nullable: true })), nested }
}

const INTEGER = /^u?int(8|16|32|64)$/

/** A value as apache-arrow's builder of `type` takes it; undefined when it does not fit. */
function cell(v: unknown, type: string): unknown {
  if (v === null || v === undefined) return null
  if (INTEGER.test(type)) {
    const wide = type.endsWith('64')
    if (typeof v === 'bigint') return wide ? v : Number(v)
    if (typeof v === 'number' && Number.isSafeInteger(v)) return wide ? BigInt(v) : v
    return undefined
  }
  if (type.startsWith('float')) return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined
  if (type === 'utf8') return typeof v === 'string' ? v : undefined
  if (type === 'bool') return typeof v === 'boolean' ? v : undefined
  if (type.startsWith('date') || type.startsWith('timestamp')) return v instanceof Date || typeof v === 'number' ? v : undefined
  return undefined
}

export function runFromItems(spec: FromItemsSpec, ...inputs: unknown[]): Buffer {
  const items = inputs.flatMap((v) => v as unknown[])
  items.forEach((it, row) => {
    if (it === null || typeof it !== 'object' || Array.isArray(it)) throw fail(`toFrame: item ${row} of partition ${spec.index} is ${Array.isArray(it) ? 'an array' : it === null ? 'null' : typeof it}, not a plain object of column values`, { row, partition: spec.index })
  })
  const objects = items as Record<string, unknown>[]
  const { fields, nested } = spec.schema ? { fields: spec.schema, nested: new Map<string, Kind>() } : inferred(objects, spec.index)
  const cols: Record<string, Vector> = {}
  for (const f of fields) {
    const kind = nested.get(f.name)
    if (kind) {
      cols[f.name] = vectorFromArray(objects.map((it) => filled(it[f.name], kind)) as never[], arrowOf(kind))
      continue
    }
    const values = objects.map((it, row) => {
      const x = cell(it[f.name], f.type)
      if (x === undefined) throw fail(`toFrame: column ${JSON.stringify(f.name)}, item ${row} of partition ${spec.index} holds ${String(it[f.name])} (${typeof it[f.name]}), which is not a ${f.type}`, { column: f.name, row, partition: spec.index })
      return x
    })
    cols[f.name] = vectorFromArray(values as never[], arrowType(f.type)!)
  }
  return Buffer.from(tableToIPC(new Table(cols), 'stream'))
}
