#!/usr/bin/env bash
# Make sure a container registry (the OCI distribution API, v2) serves on loopback, for
# `swe-forge images push` and the registry tests. Idempotent, like ensure-docker.sh: uses a
# registry that already answers at the address; otherwise installs Debian's docker-registry
# (distribution 2.8) when it is missing, writes its configuration, starts it in the background
# with its storage in a directory of ours, waits for /v2/, and says what it did. The Docker
# engine talks plain HTTP to registries on 127.0.0.0/8 without any configuration.
#
# Usage: scripts/ensure-registry.sh          start (or find) the registry; print its address
#        scripts/ensure-registry.sh stop     stop the registry this script started
# Environment:
#   SWE_FORGE_REGISTRY_ADDR  where it listens (default 127.0.0.1:5000; loopback only: it has
#                            no authentication)
#   SWE_FORGE_REGISTRY_DIR   its storage (data/), configuration, log and pid file (default
#                            ${SWE_FORGE_CACHE:-~/.cache/swe-forge}/registry)
# Exit codes: 0 serving (or stopped); 15 it cannot be started (swe-forge's RegistryError code).
set -euo pipefail

log() { echo "ensure-registry: $*"; }
fail() { echo "ensure-registry: $*" >&2; exit 15; }

ADDR="${SWE_FORGE_REGISTRY_ADDR:-127.0.0.1:5000}"
DIR="${SWE_FORGE_REGISTRY_DIR:-${SWE_FORGE_CACHE:-$HOME/.cache/swe-forge}/registry}"
PIDFILE="$DIR/registry.pid"
HOST="${ADDR%:*}"

case "$HOST" in
  127.*|localhost) ;;
  *) fail "SWE_FORGE_REGISTRY_ADDR=$ADDR is not a loopback address (this registry has no authentication)" ;;
esac

# 0: a registry answers; 1: nothing answers; 2: something else answers.
probe() {
  local headers
  if ! headers="$(curl -sS -m 5 -o /dev/null -D - "http://$ADDR/v2/" 2>/dev/null)"; then
    return 1
  fi
  if grep -qi '^docker-distribution-api-version: registry/2' <<<"$headers"; then
    return 0
  fi
  return 2
}

ours_running() {
  [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null \
    && grep -q docker-registry "/proc/$(cat "$PIDFILE")/cmdline" 2>/dev/null
}

if [ "${1:-}" = stop ]; then
  if ours_running; then
    pid="$(cat "$PIDFILE")"
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$PIDFILE"
    log "stopped the registry at $ADDR (pid $pid); its storage stays in $DIR/data"
  else
    log "no registry started by this script is running (pid file: $PIDFILE)"
  fi
  exit 0
fi

command -v curl >/dev/null 2>&1 || fail "curl is needed to check the registry; install it"

state=0
probe || state=$?
if [ "$state" = 0 ]; then
  log "a registry is serving at $ADDR"
  exit 0
elif [ "$state" = 2 ]; then
  fail "something that is not a registry answers at $ADDR; set SWE_FORGE_REGISTRY_ADDR to another port"
fi

if ! command -v docker-registry >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    fail "docker-registry is not installed; run as root (or apt-get install docker-registry) and try again"
  fi
  log "installing Debian's docker-registry"
  export DEBIAN_FRONTEND=noninteractive
  # The package's own service is not started here (no init system); we start it below.
  apt-get install -y -qq --no-install-recommends docker-registry >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends docker-registry >/dev/null; } \
    || fail "apt-get install docker-registry failed"
fi

mkdir -p "$DIR/data"
cat >"$DIR/config.yml" <<EOF
# Written by scripts/ensure-registry.sh (rewritten at each start).
version: 0.1
log:
  level: info
  fields:
    service: swe-forge-registry
storage:
  filesystem:
    rootdirectory: $DIR/data
  delete:
    enabled: true
http:
  addr: $ADDR
  headers:
    X-Content-Type-Options: [nosniff]
EOF

log "starting docker-registry at $ADDR (storage: $DIR/data, log: $DIR/registry.log)"
# setsid: the registry outlives the shell (and the test run) that started it, as a service.
setsid nohup docker-registry serve "$DIR/config.yml" >>"$DIR/registry.log" 2>&1 </dev/null &
echo $! >"$PIDFILE"
for _ in $(seq 1 60); do
  if probe; then
    log "registry $(docker-registry --version 2>/dev/null | awk '{print $3}') is serving at $ADDR"
    exit 0
  fi
  if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    break
  fi
  sleep 0.5
done
echo "ensure-registry: the registry did not come up; last lines of its log:" >&2
tail -n 20 "$DIR/registry.log" >&2 || true
exit 15
