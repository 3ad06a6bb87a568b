#!/usr/bin/env bash
# Builds the linux-x64-gnu addon with a glibc 2.17 floor (CentOS 7 and every
# later glibc) into target/release-artifacts/, named as napi names it, where
# scripts/pack-release.js takes it into the platform package.
# The addon is the host build's objects linked again, by zig, against glibc
# 2.17's symbol versions (scripts/zig-or-gcc.sh): the very objects the host
# link kept, when they are current; else rustc compiles the same code for
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
mkdir -p target/release-artifacts
out=target/release-artifacts/spillway.linux-x64-gnu.node
release=target/x86_64-unknown-linux-gnu/release
stash=$release/floor-link
# The host link's objects (scripts/zig-or-gcc.sh keeps them) serve when they
# are the ones of the addon `npm install` built and no Rust source, manifest
# or lock file changed since (the rule of build-native-if-stale.js).
fresh=0
if [ -f "$stash/linked.sha256" ] && [ -f spillway.linux-x64-gnu.node ] && [ -z "${SPILLWAY_FLOOR_REBUILD:-}" ]; then
  if [ "$(sha256sum <spillway.linux-x64-gnu.node | cut -d' ' -f1)" = "$(cat "$stash/linked.sha256")" ] &&
    [ -z "$(find crates Cargo.toml Cargo.lock \( -name '*.rs' -o -name '*.toml' -o -name Cargo.lock \) -newer spillway.linux-x64-gnu.node -print -quit)" ]; then
    fresh=1
  fi
fi
if [ "$fresh" = 1 ]; then
  echo "linking the host build's objects ($stash) against glibc 2.17" >&2
  args=()
  prev=
  while IFS= read -r a; do
    a=${a//@RUSTC@/$root/$stash/rustc}
    a=${a//@OBJECTS@/$root/$stash/objects}
    [ "$prev" = "-o" ] && a="$root/$stash/libspillway_node.so"
    args+=("$a")
    prev=$a
  done <"$stash/args"
  sh scripts/zig-or-gcc.sh -spillway-glibc-floor=2.17 "${args[@]}"
  cp "$stash/libspillway_node.so" "$out"
else
  cargo rustc --release --target x86_64-unknown-linux-gnu -p spillway-node --lib -- -C link-arg=-spillway-glibc-floor=2.17 >&2
  cp "$release/libspillway_node.so" "$out"
fi
echo "$out"
