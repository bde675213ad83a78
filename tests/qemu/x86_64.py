# SPDX-License-Identifier: GPL-2.0
# kunit.py QEMU config: q35 under TCG, x2APIC, 2 CPUs, VT-d with interrupt remapping in x2APIC
# (EIM) mode, and a virtio-rng device that uses MSI-X. SeaBIOS (QEMU's default firmware): the
# stock config's qboot.rom hangs with QEMU 10.
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0 intremap=on',
			   extra_qemu_params=['-machine', 'q35',
					      '-cpu', 'max,x2apic=on',
					      '-smp', '2',
					      '-device', 'intel-iommu,intremap=on,eim=on',
					      '-device', 'virtio-rng-pci'])
