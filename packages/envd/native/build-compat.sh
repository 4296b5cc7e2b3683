#!/bin/sh
# Builds the libc shims that gVisor sandboxes preload (one plain shared library, not an addon).
set -e
cd "$(dirname "$0")"
mkdir -p build/compat
rm -f build/compat/libx-statx-compat.so
cc -shared -fPIC -O2 -Wall -o build/compat/libx-gvisor-compat.so statx-compat.c close-range-compat.c -ldl
