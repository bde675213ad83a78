#!/bin/bash
# `make run`: boot into a busybox shell. Ctrl-a x quits QEMU.
set -euo pipefail
exec bash "$(dirname "$0")/qemu.sh" "${1:-x86_64}"
