# SPDX-License-Identifier: GPL-2.0
# kunit.py QEMU config for arm64. The machine (virt with GICv3 and EL2, so the kernel enters at
# EL2 and the GIC runs in split priority-drop/deactivate mode; 2 CPUs) is read from arm64.args,
# which the boot test and `make run` use too.
import os

from ..qemu_config import QemuArchParams

_ARGS = [l.strip() for l in open(os.path.join(os.path.dirname(__file__), 'arm64.args'))
         if l.strip()]
# kunit.py passes its own -m and -accel options.
_ARGS = [a for i, a in enumerate(_ARGS)
         if a not in ('-m', '-accel') and (i == 0 or _ARGS[i - 1] not in ('-m', '-accel'))]

QEMU_ARCH = QemuArchParams(linux_arch='arm64',
			   kconfig='''
CONFIG_SERIAL_AMBA_PL011=y
CONFIG_SERIAL_AMBA_PL011_CONSOLE=y''',
			   qemu_arch='aarch64',
			   kernel_path='arch/arm64/boot/Image.gz',
			   kernel_command_line='console=ttyAMA0',
			   extra_qemu_params=_ARGS)
