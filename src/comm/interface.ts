// An address to listen on, from a network interface's name: between login
// and compute nodes the right network is often not the default route's
// (Dask users meet this as workers that cannot reach the scheduler), so it
// can be named (`ib0`, `eth1`).

import { networkInterfaces } from 'node:os'
import { ConfigError } from '../base/errors'

/** The interface's IPv4 address (else its first IPv6 one). */
export function addressOfInterface(name: string, field = 'interface'): string {
  const all = networkInterfaces()
  const list = Object.hasOwn(all, name) ? all[name] : undefined
  const pick = list?.find((a) => a.family === 'IPv4') ?? list?.find((a) => a.family === 'IPv6')
  if (!pick) {
    throw new ConfigError([{ field, value: name, allowed: `a network interface of this node: ${Object.keys(all).join(', ')}` }], 'network interface')
  }
  return pick.address
}

/**
 * An address other nodes can reach this one at, when none is named: the
 * first non-internal IPv4 address (Debian maps the host's own name to
 * 127.0.1.1, which no other node can reach).
 */
export function nodeAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    const a = list?.find((x) => x.family === 'IPv4' && !x.internal)
    if (a) return a.address
  }
  return '127.0.0.1'
}
