#!/usr/bin/env bash
# Make sure a Docker engine is running, and that debootstrap is there for base images.
# Idempotent: uses a running daemon if there is one; otherwise installs Debian's docker.io
# (and debootstrap), starts dockerd in the background, waits for its socket, and says what
# it did. Needs root to install or start anything.
set -euo pipefail

log() { echo "ensure-docker: $*"; }

need_install=()
command -v dockerd >/dev/null 2>&1 || need_install+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_install+=(debootstrap)
command -v docker >/dev/null 2>&1 || need_install+=(docker.io)

if [ "${#need_install[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    log "missing: ${need_install[*]}; run as root (or install them) and try again" >&2
    exit 12
  fi
  log "installing ${need_install[*]} from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_install[@]}" >/dev/null
fi

if docker info >/dev/null 2>&1; then
  log "a Docker engine is running ($(docker info --format '{{.ServerVersion}}' 2>/dev/null))"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  log "no Docker engine is running and starting one needs root" >&2
  exit 12
fi

log "starting dockerd in the background (log: /var/log/swe-forge-dockerd.log)"
nohup dockerd >/var/log/swe-forge-dockerd.log 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    log "Docker engine $(docker info --format '{{.ServerVersion}}') is up"
    exit 0
  fi
  sleep 1
done
log "dockerd did not come up within 60 s; last lines of its log:" >&2
tail -n 20 /var/log/swe-forge-dockerd.log >&2 || true
exit 12
