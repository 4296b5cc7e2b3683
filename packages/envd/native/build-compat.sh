#!/bin/sh
# Builds the libc shims that gVisor sandboxes preload (plain shared libraries, not addons).
set -e
cd "$(dirname "$0")"
mkdir -p build/compat
cc -shared -fPIC -O2 -Wall -o build/compat/libx-statx-compat.so statx-compat.c -ldl
