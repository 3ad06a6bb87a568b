#!/usr/bin/env bash
# Creates bench/.venv (git-ignored) with the Python packages the benchmarks
# compare against. Idempotent: a venv that already imports them is left as is.
# Later benchmarks add their packages to PACKAGES (bench/dask/sides.js passes
# the rest: Dask, distributed, the codecs, pandas, pyarrow, DuckDB). blosc2
# is bench/core's shuffle anchor (c-blosc2); matplotlib ships the real
# numeric dataset it runs on (an elevation grid in its sample data).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
PACKAGES=(numpy blosc2 matplotlib ${BENCH_EXTRA_PACKAGES:-})
py="$venv/bin/python"
if [ ! -x "$py" ]; then
  python3 -m venv "$venv"
fi
modules=$(printf '%s\n' "${PACKAGES[@]}" | sed 's/\[.*//; s/[<>=].*//; s/-/_/g' | paste -sd, -)
if ! "$py" -c "import ${modules}" 2>/dev/null; then
  "$venv/bin/pip" install --quiet "${PACKAGES[@]}"
fi
"$py" -c "import numpy; print('bench venv ready: numpy', numpy.__version__)"
