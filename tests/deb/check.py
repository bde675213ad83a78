#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the console log of the package boot (tests/deb/check.sh, guest side tests/deb/init).

Usage: check.py LOG RELEASE ROOT [ARCH]

  LOG      the console log
  RELEASE  the kernel release the linux-image package installed
  ROOT     the root filesystem dpkg installed into (for the sample modules it holds)
  ARCH     x86_64 (the default) or arm64

Passes when the kernel booted is RELEASE; dpkg's database lists linux-image-RELEASE and
irq-rs-tools as installed; every KUnit and sample module the package installed loaded and
unloaded; the architecture's built-in suites ran at boot and the suites of its KUnit modules when
loaded, all passed, and no test failed; the status tool exited 0 and reports the architecture's
Rust paths live; and the log has no kernel splat (tests/check-splats.py).

  x86_64  built in: x86_apic_eoi_rust; modules irq_remapping_rust_kunit (rust_vtd_irte,
          rust_vtd_irte_table) and irq_balance_policy_kunit (rust_irq_balance); Rust: the
          local-APIC EOI (apic-eoi), VT-d remapping (intr-remap)
  arm64   built in: rust_gicv3; module irq_gic_v3_rust_its_kunit (rust_gicv3_its_cmd,
          rust_gicv3_its_lpi, rust_gicv3_its_rdist, rust_gicv3_its_tables; the arm64 test
          kernel has no balancer); Rust: the GICv3 root (gicv3-root) and its ITS (its)
"""

# Per architecture: the suites built in, the KUnit modules, their suites, the status components
# that must say rust.
EXPECT = {
    'x86_64': (('x86_apic_eoi_rust',),
               ('irq_balance_policy_kunit', 'irq_remapping_rust_kunit'),
               ('rust_vtd_irte', 'rust_vtd_irte_table', 'rust_irq_balance'),
               ('apic-eoi', 'intr-remap')),
    'arm64': (('rust_gicv3',),
              ('irq_gic_v3_rust_its_kunit',),
              ('rust_gicv3_its_cmd', 'rust_gicv3_its_lpi', 'rust_gicv3_its_rdist',
               'rust_gicv3_its_tables'),
              ('gicv3-root', 'its')),
}
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[1] in ('-h', '--help') or \
            (len(sys.argv) == 5 and sys.argv[4] not in EXPECT):
        print(__doc__.strip().split('\n\n')[1], file=sys.stderr)
        return 2
    path, rel, root = sys.argv[1:4]
    builtin, kunit_mods, modular, rust = EXPECT[sys.argv[4] if len(sys.argv) == 5 else 'x86_64']
    log = open(path, errors='replace').read().replace('\r', '')
    bad = []

    def want(ok, what):
        print(f"   {'ok' if ok else 'FAIL'}: {what}")
        if not ok:
            bad.append(what)

    m = re.search(r'^@@@ uname (\S+)', log, re.M)
    want(m is not None and m.group(1) == rel, f"the kernel booted is {rel} ({m.group(1) if m else 'none'})")
    installed = dict(re.findall(r'^@@@ installed (\S+) (\S+)', log, re.M))
    for p in (f'linux-image-{rel}', 'irq-rs-tools'):
        want(p in installed, f"dpkg lists {p} as installed")
    mods = [(d, os.path.basename(f).split('.ko')[0])
            for d, _, fs in os.walk(os.path.join(root, 'lib/modules', rel)) for f in fs if '.ko' in f]
    samples = sorted(n for d, n in mods if '/samples/rust' in d)
    kunit = sorted(n for d, n in mods if n.endswith('_kunit'))
    want(len(samples) > 0, f"the package installed sample modules ({', '.join(samples) or 'none'})")
    want(kunit == sorted(kunit_mods),
         f"the package installed the KUnit modules {', '.join(kunit_mods)} ({', '.join(kunit) or 'none'})")
    for n in kunit + samples:
        ins = re.search(rf'^@@@ insmod {n} (\d+)', log, re.M)
        rm = re.search(rf'^@@@ rmmod {n} (\d+)', log, re.M)
        want(ins is not None and ins.group(1) == '0' and rm is not None and rm.group(1) == '0',
             f"insmod and rmmod {n}")
    for suite in builtin + modular:
        want(re.search(rf'^\s*(\[[^]]*\]\s*)?ok \d+ {suite}$', log, re.M) is not None,
             f"KUnit suite {suite} ran and passed")
    fails = re.findall(r'^\s*(?:\[[^]]*\]\s*)?not ok \d+ (\S+)', log, re.M)
    want(not fails, f"no KUnit test failed ({', '.join(fails) or 'none'})")
    st = re.search(r'^@@@ status begin\n(.*?)^@@@ status end\n@@@ status rc (\d+)', log, re.M | re.S)
    want(st is not None and st.group(2) == '0', "the installed status tool ran and exited 0")
    report = st.group(1) if st else ''
    for comp in rust:
        want(re.search(rf'^{comp}: rust\b', report, re.M) is not None, f"status: {comp} is rust")
    want('@@@ done' in log, "the guest reached its end")
    splats = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), '..', 'check-splats.py'),
                             'deb-test', path])
    if splats.returncode != 0:
        bad.append('splats')
    print(f"== deb-test: {'PASS' if not bad else 'FAIL: ' + '; '.join(bad)}")
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
