// Typed references to a module's exports, for submit, map and the bag's
// steps: `taskModule<typeof import('./tasks.js')>(url).parse` is
// `{ module: url, name: 'parse' }`, typed as `parse` is. The types come from
// the module itself; nothing is imported here (the workers import it).

import { moduleSpecifier, type ModuleRef } from '../wire/functions'

/** A reference to each function export of `M`. */
export type TaskModule<M> = { readonly [K in keyof M as M[K] extends (...args: any[]) => any ? K : never]-?: ModuleRef<M[K]> }

/**
 * References to the exports of the module at `module` (an absolute path, a
 * file: URL or a package name), typed from `M`, e.g. `typeof import('./tasks.js')`.
 */
export function taskModule<M = Record<string, (...args: any[]) => any>>(module: string | URL): TaskModule<M> {
  const specifier = moduleSpecifier(module, 'module', 'taskModule arguments')
  const refs = new Map<string, ModuleRef>()
  return new Proxy(Object.create(null), {
    get(_, name) {
      // Not a thenable (awaiting it must not look for `then`), and symbols are no exports.
      if (typeof name !== 'string' || name === 'then') return undefined
      let ref = refs.get(name)
      if (!ref) refs.set(name, (ref = Object.freeze({ module: specifier, name })))
      return ref
    },
    has: (_, name) => typeof name === 'string' && name !== 'then',
    set: () => false,
  }) as TaskModule<M>
}
