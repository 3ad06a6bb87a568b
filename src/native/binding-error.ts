// The error when no native binding loads: which platform this is, which
// packages were tried, the real cause (the stock napi loader buries it in
// `error.cause`, behind advice about an npm bug), and how to build one.

import { SpillwayError } from '../base/errors'

/** The napi package suffix of this platform, as the loader looks for it. */
export function platformSuffix(platform: string, arch: string, libc: string | undefined): string {
  if (platform === 'linux') return `linux-${arch}-${libc === 'musl' ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

/** 'glibc 2.36', 'musl', or undefined off Linux. */
export function libcOf(platform = process.platform): string | undefined {
  if (platform !== 'linux') return undefined
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
  return header?.glibcVersionRuntime ? `glibc ${header.glibcVersionRuntime}` : 'musl'
}

function causes(err: unknown): string[] {
  const out: string[] = []
  const seen = new Set<unknown>()
  for (let e: any = err; e && !seen.has(e); e = e.cause) {
    seen.add(e)
    // No WASI build is shipped: the loader's attempts at one only hide the real cause.
    if (typeof e.message === 'string' && !/^Cannot find native binding|wasi/i.test(e.message)) out.push(e.message.split('\n')[0])
  }
  // The chain holds the last attempt outermost; say them in the order they were made.
  return out.reverse()
}

export function bindingError(err: unknown, platform = process.platform, arch = process.arch, libc = libcOf(platform)): SpillwayError {
  const suffix = platformSuffix(platform, arch, libc === 'musl' ? 'musl' : 'gnu')
  const tried = [`spillway.${suffix}.node (next to the package)`, `spillway-${suffix} (the platform package)`]
  if (process.env.NAPI_RS_NATIVE_LIBRARY_PATH) tried.unshift(`${process.env.NAPI_RS_NATIVE_LIBRARY_PATH} (NAPI_RS_NATIVE_LIBRARY_PATH)`)
  const why = causes(err)
  const glibc = why.find((m) => /GLIBC_[\d.]+['`]? not found/.test(m))
  const message = [
    `spillway's native binding did not load on ${platform} ${arch}${libc ? ` (${libc})` : ''}.`,
    `Tried: ${tried.join('; ')}.`,
    `Cause: ${why.length ? why.join('; then ') : 'no binding for this platform'}.`,
    glibc ? 'The binary needs a newer glibc than this system has; the linux-x64-gnu package is built for glibc 2.17 and later.' : '',
    `Prebuilt packages exist for linux x64/arm64 (glibc ≥ 2.17, musl) and macOS x64/arm64; check that npm installed the optional dependency spillway-${suffix} (it is skipped with --omit=optional or --no-optional).`,
    'To build from source (needs Rust): in a checkout of spillway run `npm install` (or `npm run build:native`), then point NAPI_RS_NATIVE_LIBRARY_PATH at the .node it writes.',
  ]
    .filter(Boolean)
    .join('\n')
  return new SpillwayError('ERR_SPILLWAY_NATIVE_BINDING', message, { platform, arch, libc, tried, causes: why })
}
