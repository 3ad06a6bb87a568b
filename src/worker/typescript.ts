// Task modules written in TypeScript (.ts, .mts, .cts) load on every Node
// spillway supports: through the running Node's own type stripping where it
// has it on (22.18+, 23.6+, or --experimental-strip-types), else through
// module hooks that strip with amaro (ts-hooks.ts), registered once, the
// first time such a module is asked for.

import { register } from 'node:module'
import { pathToFileURL } from 'node:url'
import { SpillwayError } from '../base/errors'
import { ownModule } from '../base/paths'

const TS = /\.[cm]?ts$/

/** Whether the specifier names a TypeScript file (a file: URL; package names resolve to their own built files). */
export function isTypeScriptModule(specifier: string): boolean {
  if (!specifier.startsWith('file:')) return false
  try {
    return TS.test(new URL(specifier).pathname)
  } catch {
    return false
  }
}

function stripsItself(): boolean {
  return Boolean((process.features as { typescript?: string | false }).typescript)
}

let hooks: 'native' | 'amaro' | undefined

/** Makes `specifier` importable when it is TypeScript, or throws ERR_SPILLWAY_TYPESCRIPT saying what to do. */
export function prepareTypeScript(specifier: string): void {
  if (hooks || !isTypeScriptModule(specifier)) return
  if (stripsItself()) {
    hooks = 'native'
    return
  }
  try {
    require.resolve('amaro')
  } catch {
    throw new SpillwayError(
      'ERR_SPILLWAY_TYPESCRIPT',
      `module ${specifier} is TypeScript, and this Node (${process.version}) does not strip types by itself while the amaro package is missing: run Node 22.18 or later, install amaro beside spillway (npm install amaro), or compile the module to .js`,
      { module: specifier, node: process.version },
    )
  }
  register(pathToFileURL(ownModule('worker/ts-hooks')).href)
  hooks = 'amaro'
}

/** Node's and amaro's codes for TypeScript they cannot strip (enums, namespaces, parameter properties) or parse. */
export function isTypeScriptSyntaxError(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code
  return code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' || code === 'ERR_INVALID_TYPESCRIPT_SYNTAX' || code === 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING'
}
