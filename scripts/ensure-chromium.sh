#!/usr/bin/env bash
# Make sure a headless Chromium is there (the HTML report's rendering test uses it): Debian's
# `chromium` package, installed when missing. Idempotent; needs root to install.
set -euo pipefail
log() { echo "ensure-chromium: $*"; }
if command -v chromium >/dev/null 2>&1; then
  log "chromium is here ($(chromium --version 2>/dev/null | head -1))"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  log "missing: chromium; run as root (or install Debian's chromium package) and try again" >&2
  exit 12
fi
log "installing Debian's chromium package"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
log "chromium is here ($(chromium --version 2>/dev/null | head -1))"
