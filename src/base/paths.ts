// Where the package's own files are. This module sits at <root>/dist/base
// when built and at <root>/src/base when run from source (through tsx), so
// both resolve from here, and nothing else builds paths from __dirname.

import { existsSync } from 'node:fs'
import { extname, join, resolve } from 'node:path'

/** The package's root: where package.json, bin/ and the native addon are. */
export const PACKAGE_ROOT = resolve(__dirname, '..', '..')

/** True when this code runs from src/ (TypeScript through a loader) rather than dist/. */
export const FROM_SOURCE = extname(__filename) === '.ts'

/**
 * One of the package's own modules, by its path under src/ without
 * extension ('worker/entry'): the built .js next to this build, or the .ts
 * when running from source.
 */
export function ownModule(path: string): string {
  const file = join(__dirname, '..', `${path}${FROM_SOURCE ? '.ts' : '.js'}`)
  if (!existsSync(file)) throw new Error(`spillway is missing its own file ${file}: reinstall the package (or run npm run build in a checkout)`)
  return file
}

/** Node flags a child needs to run ownModule()'s files: the loader this process runs under, when from source. */
export function ownModuleExecArgv(): string[] {
  return FROM_SOURCE ? process.execArgv.filter((a, i, all) => a.startsWith('--import') || a.startsWith('--require') || all[i - 1] === '--import' || all[i - 1] === '--require') : []
}

/** The CLI's entry (bin/spillway.js), for job scripts that start workers. */
export const BIN_PATH = join(PACKAGE_ROOT, 'bin', 'spillway.js')

/** A file the package ships beside its code (the dashboard's assets are copied into dist/ by the build). */
export function ownAsset(path: string): string {
  return join(__dirname, '..', path)
}
