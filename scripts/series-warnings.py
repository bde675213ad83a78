#!/usr/bin/env python3
"""Print the compiler warnings of a kernel build log that are located in files the series changes.

Usage: scripts/series-warnings.py LOG SRCTREE TOUCHED_LIST

  LOG           the build's output (stdout and stderr)
  SRCTREE       the source tree the build ran in; its prefix is cut from the paths of the log
  TOUCHED_LIST  a file naming the files the series changes, one a line, relative to SRCTREE

C's "FILE:LINE:COL: warning:" lines and rustc's "warning:" blocks, located by their
"--> FILE:LINE:COL" line, are counted. The warnings go to stderr, indented; the count to stdout.
Used by scripts/build-each.sh and scripts/distro-build.sh.
"""
import os
import re
import sys


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().split('\n\n')[1], file=sys.stderr)
        sys.exit(2)
    log, srctree, touched_list = sys.argv[1:]
    # kbuild prints the source tree's real path (its Makefile resolves it).
    prefixes = {srctree.rstrip('/') + '/', os.path.realpath(srctree) + '/'}
    touched = set(open(touched_list).read().split())
    lines = open(log, errors='replace').read().split('\n')
    n = 0
    for i, line in enumerate(lines):
        m = re.match(r'^(\S+?):\d+:\d+: warning:', line)
        f = m.group(1) if m else None
        if f is None and line.startswith('warning:') and not re.match(r'warning: \d+ warnings? emitted', line):
            for k in lines[i + 1:i + 4]:
                m = re.match(r'^\s*--> (\S+?):\d+:\d+', k)
                if m:
                    f = m.group(1)
                    break
        if f is not None:
            for prefix in prefixes:
                if f.startswith(prefix):
                    f = f[len(prefix):]
                    break
            if f in touched:
                n += 1
                print('    ' + line, file=sys.stderr)
    print(n)


if __name__ == '__main__':
    main()
