/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util.c: small helpers that csfcat and the tests share: reading and writing small files
 * (sysfs, procfs, tracefs), the running kernel's release, a monotonic clock.
 */
#ifndef CSF_TOOLS_UTIL_H
#define CSF_TOOLS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Read a small file into buf, NUL-terminated (len - 1 bytes at most; "" when it cannot be read):
 * its length, or -1 with errno.
 */
ssize_t file_read(const char *path, char *buf, size_t len);
/* file_read() without the trailing newlines and blanks (a sysfs value): 0, or -1 with errno. */
int file_read_value(const char *path, char *buf, size_t len);
/* The number a small file holds (strtoll() base 0), or -1 when it cannot be read or is empty. */
long long file_read_ll(const char *path);
/*
 * Everything fd holds, until its end, in a buffer to free(), NUL-terminated; *len (when not
 * NULL) its length. NULL with errno.
 */
char *fd_read_all(int fd, size_t *len);
/* fd_read_all() of a file. */
char *file_read_all(const char *path, size_t *len);
/*
 * Write val to a file (sysfs, procfs, tracefs): 0, or -1 with the errno of the open or write
 * (EIO when the write was short: a sysfs write is taken whole or not at all).
 */
int file_write(const char *path, const char *val);

/*
 * Where field N (1-based, as proc(5) counts them; N >= 3, 3 being the state) of a /proc/PID/stat
 * line begins, after the name (which can hold blanks and parentheses); NULL when the line has
 * fewer fields.
 */
const char *proc_stat_at(const char *line, int field);

/*
 * Whether a kernel release ("6.18.1-amd64") is at least MAJOR.MINOR; a release without a minor
 * ("7") is MAJOR.0, one without a number at all counts as new. Distributions backport: use this
 * for behaviour only, never for features.
 */
bool release_at_least(const char *release, long major, long minor);
/* release_at_least() of the running kernel (uname). */
bool kernel_at_least(long major, long minor);

/* CLOCK_MONOTONIC in ns. */
uint64_t mono_ns(void);

#endif /* CSF_TOOLS_UTIL_H */
