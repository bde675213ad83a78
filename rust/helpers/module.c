// SPDX-License-Identifier: GPL-2.0

#include <linux/module.h>

/* For the module references that Rust code holds on the owner of callbacks it installs. */
__rust_helper bool rust_helper_try_module_get(struct module *module)
{
	return try_module_get(module);
}

__rust_helper void rust_helper_module_put(struct module *module)
{
	module_put(module);
}
