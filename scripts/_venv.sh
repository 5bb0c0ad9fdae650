# Sourced by the other scripts: make .venv (once) and install swe-forge into it.
# Usage: source scripts/_venv.sh [dev]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "error: swe-forge needs Python >= 3.11 (found: $("$PY" --version 2>&1))" >&2
  echo "hint: set PYTHON=/path/to/python3.11 and run again" >&2
  exit 3
fi
if [ ! -x "$ROOT/.venv/bin/python" ]; then
  echo "==> creating $ROOT/.venv"
  "$PY" -m venv "$ROOT/.venv"
fi
VPY="$ROOT/.venv/bin/python"
extras=""
[ "${1:-}" = "dev" ] && extras="[dev]"
# Reinstall only when pyproject.toml changed since the last install (fast re-runs).
stamp="$ROOT/.venv/.swe-forge-installed${extras:+-dev}"
want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "==> installing swe-forge${extras} into .venv"
  "$VPY" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
  "$VPY" -m pip install --quiet --disable-pip-version-check -e "$ROOT${extras}"
  echo "$want" > "$stamp"
fi
