/* SPDX-License-Identifier: GPL-2.0 */
/*
 * csfcat slices: what its files share.
 *
 *   csfcat_slices.c        the command: follows the slices file, prints text or JSON
 *   csfcat_slices_prom.c   --prometheus: the long slices as counters and a histogram by class
 */
#ifndef CSFCAT_SLICES_H
#define CSFCAT_SLICES_H

#include <stdint.h>

#define SLICES_CMD "slices"
#define SLICES_WARN_PARAM "/sys/module/coarse_stat_fs/parameters/slice_warn_us"

/* Count a slice that ended (an "end" report) of class (the report's class field), len_ns long. */
void slices_prom_count(const char *class, uint64_t len_ns);
/* Count reports the kernel dropped before this reader read them (a "lost N" line). */
void slices_prom_lost(uint64_t n);
/* Write what was counted since the start to path (prom.h): 0, or -1 (said why). */
int slices_prom_write(const char *path);

#endif /* CSFCAT_SLICES_H */
