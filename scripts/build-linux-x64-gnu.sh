#!/usr/bin/env bash
# Builds the linux-x64-gnu addon with a glibc 2.17 floor (CentOS 7 and every
# later glibc) into target/release-artifacts/, named as napi names it, where
# scripts/pack-release.js takes it into the platform package.
# The addon is the host build's objects linked again, by zig, against glibc
# 2.17's symbol versions (scripts/zig-or-gcc.sh): rustc compiles the same code for
# the same target, so only the addon crate is rebuilt (and LTO'd), not the
# tree. The C in the tree (zstd) stays gcc's, as in the host build: zstd's
# decoder built by zig's clang decompresses 35-45% slower here
# (BENCHMARKS.md). The floor check catches any symbol a newer glibc header
# would pull in. The zig tools come from PyPI into a virtualenv cached
# outside the repository.
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
export SPILLWAY_ZIGBUILD="$venv/bin/cargo-zigbuild"
export CARGO_ZIGBUILD_ZIG_COMMAND="$venv/bin/python3"
export CARGO_ZIGBUILD_ZIG_COMMAND_ARGS="-m ziglang"
cd "$root"
cargo rustc --release --target x86_64-unknown-linux-gnu -p spillway-node --lib -- -C link-arg=-spillway-glibc-floor=2.17 >&2
mkdir -p target/release-artifacts
out=target/release-artifacts/spillway.linux-x64-gnu.node
cp target/x86_64-unknown-linux-gnu/release/libspillway_node.so "$out"
echo "$out"
