'use strict'
// The flags every bench takes, `--flag value` or `--flag=value` (as `npm run
// bench` passes each suite the same flags): one reader for all of them.

const argv = process.argv.slice(2)

/** True when `--name` is given. */
const flag = (name) => argv.includes(name)

/** The value of `--name value` or `--name=value`, or undefined. */
const value = (name) => {
  const eq = argv.find((a) => a.startsWith(name + '='))
  if (eq) return eq.slice(name.length + 1)
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}

module.exports = { argv, flag, value }
