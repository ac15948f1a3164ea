// SPDX-License-Identifier: GPL-2.0
/*
 * t_lib_dl: a shared object that uses the library, for t_lib's dlclose() scenario: the calling
 * thread's first snapshot maps its page from inside this object.
 */
#include "../../lib/coarse_stat_fs.h"

int t_lib_dl_snap(void);

int t_lib_dl_snap(void)
{
	struct csf_snap s;

	return csf_thread_snap(&s);
}
