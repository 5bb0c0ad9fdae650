#!/usr/bin/env bash
# Set up .venv with the dev tools and run the whole suite: lint, types, tests.
# Usage: scripts/test.sh [pytest args...]
#   Locally without Docker: SWE_FORGE_NO_DOCKER=1 scripts/test.sh -m "not docker and not browser"
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh dev
echo "==> ruff"
.venv/bin/ruff check swe_forge tests scripts
.venv/bin/ruff format --check swe_forge tests scripts
echo "==> mypy"
.venv/bin/mypy swe_forge
if [ "${SWE_FORGE_NO_DOCKER:-}" != 1 ]; then
  # Docker tests are part of the suite; they fail (never skip) without an engine, and the
  # registry tests without the loopback registry.
  bash scripts/ensure-docker.sh
  bash scripts/ensure-registry.sh
  # The HTML report is rendered in headless Chromium by its test (Debian's package).
  bash scripts/ensure-chromium.sh
fi
echo "==> pytest"
.venv/bin/python -m pytest "$@"
