# SPDX-License-Identifier: GPL-2.0
# kunit.py QEMU config for the x86_64 benchmarks (`make bench`): the x86_64 machine in xAPIC mode
# under -icount shift=0,sleep=off, i.e. one guest instruction per virtual nanosecond. xAPIC
# because QEMU 10 aborts with "Bad icount read" on x2APIC MSR accesses under icount. Arguments in
# x86_64-icount.args.
import os

from ..qemu_config import QemuArchParams

_ARGS = [l.strip() for l in open(os.path.join(os.path.dirname(__file__), 'x86_64-icount.args'))
         if l.strip()]
# kunit.py passes its own -m and -accel options.
_ARGS = [a for i, a in enumerate(_ARGS)
         if a not in ('-m', '-accel') and (i == 0 or _ARGS[i - 1] not in ('-m', '-accel'))]

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0',
			   extra_qemu_params=_ARGS)
