// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit test of the Rust local APIC EOI: the EOI callback that the installed APIC driver
 * uses, and the static call target apic_eoi() jumps to, is the Rust function for the APIC
 * mode in use.
 *
 * apic_eoi_c_reference_msr() is C's native_apic_msr_eoi() compiled out of line, so that the
 * build can compare its instructions with rust_apic_msr_eoi()'s (objdump). It is
 * never called.
 */
#include <kunit/test.h>
#include <linux/static_call.h>
#include <asm/apic.h>

void apic_eoi_c_reference_msr(void);
void apic_eoi_c_reference_msr(void)
{
	native_apic_msr_eoi();
}

static void *expected_eoi(void)
{
	return x2apic_enabled() ? (void *)rust_apic_msr_eoi : (void *)rust_apic_mem_eoi;
}

static void apic_eoi_callback_is_rust(struct kunit *test)
{
	KUNIT_ASSERT_NOT_NULL(test, apic);
	kunit_info(test, "APIC driver %s, x2APIC %s\n", apic->name,
		   x2apic_enabled() ? "enabled" : "disabled");
	KUNIT_EXPECT_PTR_EQ(test, (void *)apic->eoi, expected_eoi());
	KUNIT_EXPECT_PTR_EQ(test, (void *)apic->native_eoi, expected_eoi());
}

static void apic_eoi_static_call_is_rust(struct kunit *test)
{
	KUNIT_EXPECT_PTR_EQ(test, (void *)static_call_query(apic_call_eoi), expected_eoi());
}

static struct kunit_case apic_eoi_rust_cases[] = {
	KUNIT_CASE(apic_eoi_callback_is_rust),
	KUNIT_CASE(apic_eoi_static_call_is_rust),
	{}
};

static struct kunit_suite apic_eoi_rust_suite = {
	.name = "x86_apic_eoi_rust",
	.test_cases = apic_eoi_rust_cases,
};
kunit_test_suite(apic_eoi_rust_suite);

MODULE_DESCRIPTION("KUnit test of the Rust local APIC EOI");
MODULE_LICENSE("GPL");
