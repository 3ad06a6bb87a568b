#!/usr/bin/env bash
# Builds the linux-x64-gnu addon with a glibc 2.17 floor (CentOS 7 and every
# later glibc) into target/release-artifacts/, named as napi names it, where
# scripts/pack-release.js takes it into the platform package.
# cargo-zigbuild links with zig against glibc 2.17's symbol versions, so the
# build machine's own glibc does not leak into the binary. The tools come
# from PyPI into a virtualenv cached outside the repository.
#
#   npm run build:linux-x64-gnu      (or: bash scripts/build-linux-x64-gnu.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="${SPILLWAY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/spillway}"
venv="$cache/zigbuild-venv"
if ! "$venv/bin/cargo-zigbuild" --version >/dev/null 2>&1; then
  mkdir -p "$cache"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "ziglang==0.17.1" "cargo-zigbuild==0.24.1"
fi
export PATH="$venv/bin:$PATH"
# zig links against glibc 2.17; the C in the tree (zstd) is compiled by gcc
# as in the host build: zstd's decoder built by zig's clang decompresses
# 35-45% slower here (BENCHMARKS.md). The floor check catches any symbol a
# newer glibc header would pull in.
export CC_x86_64_unknown_linux_gnu="${CC_x86_64_unknown_linux_gnu:-gcc}"
cd "$root"
cargo zigbuild --release --target x86_64-unknown-linux-gnu.2.17 -p spillway-node >&2
mkdir -p target/release-artifacts
out=target/release-artifacts/spillway.linux-x64-gnu.node
cp target/x86_64-unknown-linux-gnu/release/libspillway_node.so "$out"
echo "$out"
