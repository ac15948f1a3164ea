// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: the cpu page.
 *
 * Not implemented yet: opening the file fails with EOPNOTSUPP rather than showing made-up data.
 */
#include <linux/fs.h>
#include <linux/module.h>

#include "csf.h"

static int csf_cpu_open(struct inode *inode, struct file *file)
{
	return -EOPNOTSUPP;
}

const struct file_operations csf_cpu_fops = {
	.owner = THIS_MODULE,
	.open = csf_cpu_open,
};

loff_t csf_cpu_map_size(void)
{
	return 0;
}

int csf_cpu_init(void)
{
	return 0;
}

void csf_cpu_exit(void)
{
}
