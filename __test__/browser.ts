// The browser the dashboard test drives: Debian's Chromium when it is
// installed, else the Chromium that the @sparticuz/chromium dev dependency
// ships inside its npm package (brotli-compressed), unpacked once into a
// cache outside the repository with the few libraries and the SwiftShader
// GL it needs beside it. Nothing is downloaded from anywhere but npm.

import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { brotliDecompressSync } from 'node:zlib'

export const DEBIAN_CHROMIUM = '/usr/bin/chromium'

export interface Browser {
  executablePath: string
  env: Record<string, string>
  /** Flags this build needs on top of the test's. */
  args: string[]
  /** Where it came from, for messages. */
  source: string
}

function unpack(bin: string, name: string): Buffer {
  return brotliDecompressSync(readFileSync(join(bin, name)))
}

function bundled(): Browser {
  // Its exports hide package.json: walk up from its entry to the folder holding bin/.
  let pkg = dirname(require.resolve('@sparticuz/chromium'))
  while (!existsSync(join(pkg, 'bin', 'chromium.br')) && dirname(pkg) !== pkg) pkg = dirname(pkg)
  const version: string = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version
  const cache = join(process.env.SPILLWAY_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'spillway'), `chromium-${version}`)
  const exe = join(cache, 'chromium')
  if (!existsSync(exe)) {
    const bin = join(pkg, 'bin')
    const tmp = `${cache}.partial-${process.pid}`
    mkdirSync(tmp, { recursive: true })
    for (const tar of ['swiftshader.tar.br', 'al2023.tar.br', 'fonts.tar.br']) {
      const file = join(tmp, tar.replace(/\.br$/, ''))
      writeFileSync(file, unpack(bin, tar))
      execFileSync('tar', ['xf', file, '-C', tmp])
    }
    // Its fontconfig file names Lambda's directories; point it at ours.
    writeFileSync(
      join(tmp, 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig><dir>${join(cache, 'fonts')}</dir><cachedir>${join(cache, 'fonts-cache')}</cachedir></fontconfig>\n`,
    )
    writeFileSync(join(tmp, 'chromium'), unpack(bin, 'chromium.br'))
    chmodSync(join(tmp, 'chromium'), 0o755)
    // A whole directory or none: a run killed half-way leaves only a .partial.
    renameSync(tmp, cache)
  }
  return {
    executablePath: exe,
    // Amazon Linux's NSS libraries (the only ones it needs beyond glibc) and its fonts.
    env: { LD_LIBRARY_PATH: [join(cache, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'), FONTCONFIG_PATH: cache, LANG: 'en_US.UTF-8', LC_ALL: 'en_US.UTF-8' },
    // Built for Lambda, where its renderer cannot start as a separate process.
    // Without a locale of its own it derives 'en-US@posix' from LANG=C, which Intl rejects.
    args: ['--single-process', '--no-zygote', '--lang=en-US'],
    source: `@sparticuz/chromium ${version}`,
  }
}

/** Debian's Chromium if present (unless SPILLWAY_TEST_BROWSER=bundled), else the bundled one. */
export function testBrowser(): Browser {
  if (process.env.SPILLWAY_TEST_BROWSER !== 'bundled' && existsSync(DEBIAN_CHROMIUM)) return { executablePath: DEBIAN_CHROMIUM, env: {}, args: [], source: 'Debian chromium' }
  return bundled()
}
