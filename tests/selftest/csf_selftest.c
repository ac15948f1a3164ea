// SPDX-License-Identifier: GPL-2.0
/*
 * csf_selftest: a test-only module that misbehaves on demand, so that the harness can show that
 * it catches a kernel warning (action=warn) and a panic (action=panic). Never load it outside a
 * throwaway guest.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>

static char *action = "none";
module_param(action, charp, 0444);
MODULE_PARM_DESC(action, "none, warn or panic");

static int __init csf_selftest_init(void)
{
	if (!strcmp(action, "warn"))
		WARN(1, "csf_selftest: warning on demand\n");
	else if (!strcmp(action, "panic"))
		panic("csf_selftest: panic on demand\n");
	else if (strcmp(action, "none"))
		return -EINVAL;
	return 0;
}

static void __exit csf_selftest_exit(void)
{
}

module_init(csf_selftest_init);
module_exit(csf_selftest_exit);
MODULE_DESCRIPTION("coarse_stat_fs harness self-test: warns or panics on demand");
MODULE_LICENSE("GPL");
