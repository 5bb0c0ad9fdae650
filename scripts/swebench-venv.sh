#!/usr/bin/env bash
# Make (once) a venv holding SWE-bench 5's harness and print its python's path on stdout.
# Usage: PY=$(scripts/swebench-venv.sh [DIR])
#   DIR defaults to $SWE_FORGE_CACHE (or ~/.cache/swe-forge)/swebench-$SWEBENCH_VERSION;
#   SWEBENCH_VERSION defaults to 5.0.2, the version our SWE-bench export is tested against.
# swebench is installed from the package index with the host's pip settings; it stays out of
# swe-forge's own .venv (it pins nothing and brings datasets, modal, typer...). Concurrent runs
# wait for each other (flock); a half-made venv is made again.
set -euo pipefail
version="${SWEBENCH_VERSION:-5.0.2}"
cache="${SWE_FORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/swe-forge}"
dir="${1:-$cache/swebench-$version}"
py="${PYTHON:-python3}"
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [ "$(cat "$dir/.swe-forge-installed" 2>/dev/null || true)" != "swebench==$version" ]; then
  echo "==> making $dir (swebench==$version)" >&2
  rm -rf "$dir"
  "$py" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "swebench==$version" >&2
  "$dir/bin/python" -c "import swebench.harness.run_evaluation" >&2
  echo "swebench==$version" >"$dir/.swe-forge-installed"
fi
echo "$dir/bin/python"
