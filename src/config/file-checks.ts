// The options that name files, checked against the filesystem before
// anything starts: a missing TLS file or a scheduler file in a missing
// directory would otherwise surface as a raw ENOENT from deep in start-up,
// after workers were spawned. Kept out of SetupConfig's constructor, which
// stays pure (a config may be made on one node and used on another).

import { accessSync, constants, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ConfigError, type ConfigProblem } from '../base/errors'
import type { SetupConfig } from './config'

function why(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code
  return code === 'ENOENT' ? 'it does not exist' : code === 'EACCES' ? 'this user may not read it' : (err as Error).message
}

function readableFile(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return 'it is not a file'
    accessSync(path, constants.R_OK)
    return undefined
  } catch (err) {
    return why(err)
  }
}

function writableDir(dir: string): string | undefined {
  try {
    if (!statSync(dir).isDirectory()) return `${dir} is not a directory`
    accessSync(dir, constants.W_OK | constants.X_OK)
    return undefined
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    return code === 'ENOENT' ? `its directory ${dir} does not exist` : code === 'EACCES' ? `this user may not write in ${dir}` : (err as Error).message
  }
}

/** Every file option that cannot be used as given, one problem each. */
export function fileProblems(config: Pick<SetupConfig, 'tlsCert' | 'tlsKey' | 'tlsCa' | 'schedulerFile'>): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  for (const field of ['tlsCert', 'tlsKey', 'tlsCa'] as const) {
    const path = config[field]
    if (path === undefined) continue
    const problem = readableFile(path)
    if (problem) problems.push({ field, value: path, allowed: `a readable PEM file (${problem})` })
  }
  if (config.schedulerFile !== undefined) {
    const problem = writableDir(dirname(resolve(config.schedulerFile)))
    if (problem) problems.push({ field: 'schedulerFile', value: config.schedulerFile, allowed: `a path in an existing directory this user can write (${problem})` })
  }
  return problems
}

/** Throws one ConfigError naming every file option that cannot be used. */
export function checkFiles(config: SetupConfig): void {
  const problems = fileProblems(config)
  if (problems.length) throw new ConfigError(problems)
}
