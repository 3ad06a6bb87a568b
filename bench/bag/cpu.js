// CPU seconds (user + system) used so far by a process and every process
// under it, from /proc (Linux): on a shared machine a side's wall time
// depends on the others' load, its CPU time much less. undefined elsewhere.
'use strict'

const fs = require('node:fs')

const TICKS = 100 // USER_HZ on Linux

/** [pid, ppid, utime + stime in ticks] of every process readable in /proc. */
function processes() {
  const out = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      // The command name (field 2) may hold spaces: fields are counted after its ')'.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out.push([Number(name), Number(f[1]), Number(f[11]) + Number(f[12])])
    } catch {}
  }
  return out
}

function treeCpuSeconds(root = process.pid) {
  if (process.platform !== 'linux') return undefined
  const all = processes()
  const children = new Map()
  for (const [pid, ppid] of all) (children.get(ppid) ?? children.set(ppid, []).get(ppid)).push(pid)
  const ticks = new Map(all.map(([pid, , t]) => [pid, t]))
  let sum = 0
  const stack = [root]
  while (stack.length) {
    const pid = stack.pop()
    sum += ticks.get(pid) ?? 0
    stack.push(...(children.get(pid) ?? []))
  }
  return sum / TICKS
}

module.exports = { treeCpuSeconds }
