#!/usr/bin/env bash
# One command on a fresh machine: set up .venv, create the embedded example repository and
# run the pipeline on it, printing what it found.
# Usage: scripts/quickstart.sh [--language L ...] [--all] [OUTPUT_DIR]   (default: ./quickstart-out)
#   default: the Python example only (a few minutes on a fresh machine: the base image is
#   bootstrapped once); --language go|rust|js|java adds that example (repeatable; python is
#   always run first); --all runs all five (about 20 minutes on a fresh 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
LANGS=()
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --all) LANGS=(go rust js java); shift ;;
    --language) [ $# -ge 2 ] || { echo "--language needs a value: go, rust, js or java" >&2; exit 2; }
      case "$2" in
        python) ;;
        go|rust|js|java) LANGS+=("$2") ;;
        *) echo "unknown language: $2 (python, go, rust, js or java)" >&2; exit 2 ;;
      esac
      shift 2 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
    *) OUT="$1"; shift ;;
  esac
done
OUT="${OUT:-quickstart-out}"
source scripts/_venv.sh
mkdir -p "$OUT"
SF=".venv/bin/swe-forge"
echo "==> creating the example repository in $OUT/textkit"
"$SF" example create "$OUT/textkit" --force
echo "==> mining it"
"$SF" mine "$OUT/textkit" -o "$OUT/candidates.jsonl" --rejected "$OUT/rejected.jsonl"
echo
echo "==> candidates (instance_id, files in patch | files in test_patch)"
.venv/bin/python - "$OUT/candidates.jsonl" "$OUT/rejected.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    print(f"  {c['instance_id']:<24} {', '.join(c['files']['patch_files'])} | {', '.join(c['files']['test_files'])}")
print("==> rejected PRs (instance_id: reason)")
for line in open(sys.argv[2]):
    r = json.loads(line)
    print(f"  {r['instance_id'] or r['repo']:<24} {r['reason']}: {r['detail'][:70]}")
PY
echo
bash scripts/ensure-docker.sh
echo "==> building hermetic images (base: debootstrap, about a minute the first time; env and instances: no network)"
"$SF" images build "$OUT/candidates.jsonl" -o "$OUT/images.jsonl"
echo "==> admitting: 3 runs before and 3 after the gold patch per candidate, fresh containers, no network"
"$SF" admit "$OUT/candidates.jsonl" --images "$OUT/images.jsonl" -o "$OUT/tasks.jsonl" --rejected "$OUT/admit-rejected.jsonl" --restart
echo
echo "==> the funnel"
"$SF" report "$OUT/candidates.jsonl" "$OUT/rejected.jsonl" "$OUT/tasks.jsonl" "$OUT/admit-rejected.jsonl"
echo
echo "==> verifying the gold patches of the admitted tasks (fresh locked-down container each)"
"$SF" verify --tasks "$OUT/tasks.jsonl" --gold -o "$OUT/results.jsonl" --report "$OUT/report.json"
.venv/bin/python - "$OUT/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"resolved {r['resolved_instances']} of {r['submitted_instances']} gold patches")
PY
echo
echo "outputs in $OUT: candidates.jsonl, rejected.jsonl, images.jsonl, tasks.jsonl, admit-rejected.jsonl, results.jsonl, report.json"

# The other ecosystems' examples (--language, --all): the same pipeline through each adapter (toolchain chosen by
# the base commit's date, dependencies vendored, tests with no network, structured results).
for lang in ${LANGS[@]+"${LANGS[@]}"}; do
  L="$OUT/$lang"
  mkdir -p "$L"
  echo
  echo "==> the $lang example: create, mine, admit, verify the gold patches"
  "$SF" example create "$L/repo" --language "$lang" --force
  "$SF" mine "$L/repo" -o "$L/candidates.jsonl" --rejected "$L/rejected.jsonl"
  "$SF" admit "$L/candidates.jsonl" -o "$L/tasks.jsonl" --rejected "$L/admit-rejected.jsonl" --restart
  "$SF" report "$L/candidates.jsonl" "$L/rejected.jsonl" "$L/tasks.jsonl" "$L/admit-rejected.jsonl"
  "$SF" verify "$L/tasks.jsonl" --gold -o "$L/results.jsonl" --report "$L/report.json"
  .venv/bin/python - "$L/report.json" "$lang" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: resolved {r['resolved_instances']} of {r['submitted_instances']} gold patches")
PY
done
