# SPDX-License-Identifier: GPL-2.0
# kunit.py QEMU config: virt with GICv3 and EL2 (virtualization=on), so the kernel enters at EL2
# and the GIC runs in split priority-drop/deactivate (EOImode=1) mode; 2 CPUs.
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='arm64',
			   kconfig='''
CONFIG_SERIAL_AMBA_PL011=y
CONFIG_SERIAL_AMBA_PL011_CONSOLE=y''',
			   qemu_arch='aarch64',
			   kernel_path='arch/arm64/boot/Image.gz',
			   kernel_command_line='console=ttyAMA0',
			   extra_qemu_params=['-machine', 'virt,gic-version=3,virtualization=on',
					      '-cpu', 'max', '-smp', '2'])
