#!/usr/bin/env bash
# Set up .venv with the dev tools and run the whole suite: lint, types, tests.
# Usage: scripts/test.sh [pytest args...]   (e.g. scripts/test.sh -m "not docker" -x)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh dev
echo "==> ruff"
.venv/bin/ruff check swe_forge tests scripts
.venv/bin/ruff format --check swe_forge tests scripts
echo "==> mypy"
.venv/bin/mypy swe_forge
echo "==> pytest"
.venv/bin/python -m pytest "$@"
