#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Press QEMU's power key when the guest of a boot test asks for it (tests/boot/boot-test.sh).

Follows the growing console LOG until the guest prints "@@@ press power key" (tests/boot/init),
then connects to QEMU's QMP socket SOCK and sends qmp_capabilities and system_powerdown. On
arm64's virt machine without ACPI (the kernel is booted directly, without firmware),
system_powerdown only pulses GPIO 3 of the pl061, the power key: the guest keeps running.
Gives up when the guest finishes ("@@@ boot test done") or after TIMEOUT seconds. Writes a
transcript to OUT (one line per QMP exchange; the last line is "qmp-powerkey: sent",
"qmp-powerkey: not asked" or "qmp-powerkey: error: ...").

Usage: qmp-powerkey.py LOG SOCK OUT [TIMEOUT]
"""
import json
import os
import socket
import sys
import time

MARK = b"@@@ press power key"
DONE = b"@@@ boot test done"


def wait_for_mark(path, deadline):
    """Follow PATH until MARK (True) or DONE/the deadline (False)."""
    pos, tail = 0, b""
    while time.monotonic() < deadline:
        try:
            with open(path, "rb") as f:
                if os.fstat(f.fileno()).st_size < pos:  # truncated: a new boot
                    pos, tail = 0, b""
                f.seek(pos)
                data = f.read()
        except FileNotFoundError:
            data = b""
        if data:
            pos += len(data)
            buf = tail + data
            if MARK in buf:
                return True
            if DONE in buf:
                return False
            tail = buf[-max(len(MARK), len(DONE)):]
        time.sleep(0.05)
    return False


def qmp(sock_path, out, deadline):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    while True:
        try:
            s.connect(sock_path)
            break
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    s.settimeout(max(1.0, deadline - time.monotonic()))
    f = s.makefile("rwb")

    def reply():
        # The next command reply, skipping asynchronous events (e.g. POWERDOWN).
        while True:
            line = f.readline()
            if not line:
                raise EOFError("QMP connection closed")
            out.write("<- " + line.decode(errors="replace"))
            msg = json.loads(line)
            if "return" in msg or "error" in msg:
                return msg

    greeting = f.readline()
    out.write("<- " + greeting.decode(errors="replace"))
    for cmd in ("qmp_capabilities", "system_powerdown"):
        req = json.dumps({"execute": cmd})
        out.write(f"-> {req}\n")
        f.write(req.encode() + b"\n")
        f.flush()
        msg = reply()
        if "error" in msg:
            raise RuntimeError(f"{cmd}: {msg['error']}")
    s.close()


def main():
    try:
        if not 4 <= len(sys.argv) <= 5 or sys.argv[1] in ("-h", "--help"):
            raise ValueError
        log, sock_path, out_path = sys.argv[1:4]
        timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 600
    except ValueError:
        print("usage: qmp-powerkey.py LOG SOCK OUT [TIMEOUT]   (TIMEOUT: seconds, default 600)",
              file=sys.stderr)
        return 2
    deadline = time.monotonic() + timeout
    with open(out_path, "w", buffering=1) as out:  # line-buffered: may be killed
        if not wait_for_mark(log, deadline):
            out.write("qmp-powerkey: not asked\n")
            return 0
        try:
            qmp(sock_path, out, deadline)
        except Exception as e:  # noqa: BLE001 - reported in the transcript
            out.write(f"qmp-powerkey: error: {type(e).__name__}: {e}\n")
            return 1
        out.write("qmp-powerkey: sent\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
