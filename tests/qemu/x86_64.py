# SPDX-License-Identifier: GPL-2.0
# kunit.py QEMU config for x86_64. The machine (q35 under TCG, x2APIC, 2 CPUs, VT-d with
# interrupt remapping in x2APIC/EIM mode, a virtio-rng device using MSI-X) is read from
# x86_64.args, which the boot test and `make run` use too. Firmware: QEMU's default SeaBIOS (the
# stock config's qboot.rom hangs with QEMU 10).
import os

from ..qemu_config import QemuArchParams

_ARGS = [l.strip() for l in open(os.path.join(os.path.dirname(__file__), 'x86_64.args'))
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
