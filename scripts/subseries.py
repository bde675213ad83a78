#!/usr/bin/env python3
"""The sub-series of patches/subseries: check that each applies to the base with only its
prerequisites (transitively), with `git apply` in a private index (as `git am` without --3way),
and, with --write DIR, write each as `git format-patch` does, with its cover letter
(patches/covers/NAME.txt), base-commit and prerequisite-patch-id lines, to DIR/NAME/.

Usage: scripts/subseries.py TREE [--write DIR]
"""
import os, subprocess, sys, tempfile

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tree = sys.argv[1]
out = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == '--write' else None
pdir = os.path.join(top, 'patches')
series = [l.split()[0] for l in open(os.path.join(pdir, 'series'))
          if l.strip() and not l.startswith('#')]
groups, order = {}, []
for l in open(os.path.join(pdir, 'subseries')):
    if not l.strip() or l.startswith('#'):
        continue
    first, last, name, *pre = l.split()
    groups[name] = (int(first), int(last), [p for p in pre if p != '-'])
    order.append(name)
covered = sorted(i for g in groups.values() for i in range(g[0], g[1] + 1))
if covered != list(range(1, len(series) + 1)):
    sys.exit('subseries: patches/subseries does not cover patches/series exactly once')


def prereqs(name, seen=None):
    seen = [] if seen is None else seen
    for p in groups[name][2]:
        if p not in groups:
            sys.exit(f'subseries: {name}: unknown prerequisite {p}')
        if p not in seen:
            prereqs(p, seen)
            seen.append(p)
    return seen


def git(*a, env=None, inp=None):
    r = subprocess.run(['git', '-C', tree, *a], capture_output=True, text=True, env=env, input=inp)
    return r


rc = 0
ident = {'GIT_AUTHOR_NAME': 'IRQ-RS Developers', 'GIT_AUTHOR_EMAIL': 'irq-rs@localhost',
         'GIT_COMMITTER_NAME': 'IRQ-RS Developers', 'GIT_COMMITTER_EMAIL': 'irq-rs@localhost'}
for name in order:
    pre = prereqs(name)
    todo = [(p, i) for p in pre + [name] for i in range(groups[p][0], groups[p][1] + 1)]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, 'index'), **ident)
        git('read-tree', 'base', env=env)
        head = git('rev-parse', 'base').stdout.strip()
        failed = None
        mine = []
        for g, i in todo:
            patch = os.path.join(pdir, series[i - 1])
            info = subprocess.run(['git', 'mailinfo', os.path.join(tmp, 'msg'), os.path.join(tmp, 'diff')],
                                  stdin=open(patch), capture_output=True, text=True).stdout
            if os.path.getsize(os.path.join(tmp, 'diff')):
                r = git('apply', '--cached', os.path.join(tmp, 'diff'), env=env)
                if r.returncode:
                    failed = (series[i - 1], r.stderr.strip())
                    break
            subj = [l[9:] for l in info.split('\n') if l.startswith('Subject: ')][0]
            msg = subj + '\n\n' + open(os.path.join(tmp, 'msg')).read()
            t = git('write-tree', env=env).stdout.strip()
            head = git('commit-tree', t, '-p', head, '-F', '-', env=env, inp=msg).stdout.strip()
            if g == name:
                mine.append(head)
        base = 'the base' + ''.join(f' + {p}' for p in pre)
        if failed:
            print(f'{name}: does NOT apply to {base}: {failed[0]}\n    ' +
                  failed[1].replace('\n', '\n    '))
            rc = 1
            continue
        print(f'{name}: patches {groups[name][0]}-{groups[name][1]} apply to {base}')
        if out:
            d = os.path.join(out, name)
            os.makedirs(d, exist_ok=True)
            r = git('format-patch', '-q', '--cover-letter', '--base=base', '--zero-commit',
                    '--no-signature', f'--subject-prefix=PATCH', '-o', d,
                    f'{mine[0]}^..{mine[-1]}', env=env)
            if r.returncode:
                sys.exit(r.stderr)
            cl = os.path.join(d, '0000-cover-letter.patch')
            subprocess.run([sys.executable, os.path.join(top, 'scripts', 'cover-letter.py'), cl,
                            os.path.join(pdir, 'covers', name + '.txt')], check=True)
sys.exit(rc)
