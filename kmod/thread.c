// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: per-thread pages (thread-self).
 *
 * Not implemented yet: opening the file fails with EOPNOTSUPP rather than showing made-up data.
 */
#include <linux/fs.h>
#include <linux/module.h>

#include "csf.h"

static int csf_thread_open(struct inode *inode, struct file *file)
{
	return -EOPNOTSUPP;
}

const struct file_operations csf_thread_fops = {
	.owner = THIS_MODULE,
	.open = csf_thread_open,
};

int csf_thread_init(void)
{
	return 0;
}

void csf_thread_exit(void)
{
}
