#!/usr/bin/env bash
# Installs everything the platform and its tests need on a fresh Debian 12 machine, as root.
# Safe to run again: each step checks before it acts.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION=$(node -p 'require("./package.json").packageManager.split("@")[1]')

# Debian packages: the two sandbox runtimes, networking tools, the base-image builder,
# OCI image tools for template imports and registry pulls, PostgreSQL for the store tests, tmux
# for CLI tests, a registry and htpasswd for the registry template tests, Chromium for the web
# console's browser tests (driven by playwright-core, which downloads no browser of its own),
# Dante for the SOCKS5 egress proxy tests (an open SOCKS5 server as users run it).
DEBS=(runc runsc tini iproute2 nftables e2fsprogs debootstrap skopeo umoci postgresql tmux openssl
  docker-registry apache2-utils chromium dante-server)
missing=()
for pkg in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # the registry is for tests, which start their own on free ports: none serves on :5000
  if [[ " ${missing[*]} " == *" docker-registry "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now docker-registry >/dev/null 2>&1 || true
  fi
  # so is Dante: the SOCKS5 tests start their own in a network namespace of theirs
  if [[ " ${missing[*]} " == *" dante-server "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now danted >/dev/null 2>&1 || true
  fi
fi

# gVisor from bookworm-backports (2024-07) rather than bookworm's (2022-12): process creation
# about 20% and file work 30-50% faster under the same ptrace platform, `ls -l` works, listening
# sockets checkpoint, and it leaves the owner of its standard streams alone. Only runsc is taken
# from backports (its packages are never installed unless asked for); when the suite cannot be
# reached, bookworm's runsc stays, which the platform also supports.
if ! dpkg-query -W -f='${Version}' runsc 2>/dev/null | grep -q bpo; then
  mirror=$(awk '/^URIs:/ && /debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  if [ ! -e /etc/apt/sources.list.d/x-bookworm-backports.sources ]; then
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$mirror" >/etc/apt/sources.list.d/x-bookworm-backports.sources
  fi
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq && apt-get install -y -qq --no-install-recommends -t bookworm-backports runsc >/dev/null; then
    echo "setup: runsc $(dpkg-query -W -f='${Version}' runsc) from bookworm-backports"
  else
    echo "setup: bookworm-backports could not be reached: keeping bookworm's runsc"
  fi
fi

if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  echo "setup: installing pnpm $PNPM_VERSION"
  npm install -g --silent "pnpm@$PNPM_VERSION"
fi

pnpm install --frozen-lockfile --reporter=append-only | tail -3
# The x command and the envd bundle that sandboxes boot run from build output.
pnpm build --output-logs=errors-only >/dev/null

# PostgreSQL for the store tests: a local cluster with a role and database of ours.
if command -v pg_lsclusters >/dev/null; then
  cluster=$(pg_lsclusters -h | awk 'NR==1 {print $1" "$2}')
  if [ -n "$cluster" ]; then
    # shellcheck disable=SC2086
    pg_ctlcluster $cluster start 2>/dev/null || true
    su postgres -c "psql -qtAc \"SELECT 1 FROM pg_roles WHERE rolname='xsandbox'\"" | grep -q 1 ||
      su postgres -c "psql -qc \"CREATE ROLE xsandbox LOGIN SUPERUSER PASSWORD 'xsandbox'\""
  fi
fi
echo "setup: done"
