// SPDX-License-Identifier: GPL-2.0
/*
 * Small helpers that csfcat and the tests share (util.h): one copy, so that they cannot drift.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

ssize_t file_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	size_t total = 0;
	ssize_t n = 0;

	if (len)
		buf[0] = 0;
	if (fd < 0)
		return -1;
	while (total + 1 < len && (n = read(fd, buf + total, len - 1 - total)) > 0)
		total += (size_t)n;
	e = errno;
	close(fd);
	if (len)
		buf[total] = 0;
	if (n < 0) {
		errno = e;
		return -1;
	}
	return (ssize_t)total;
}

int file_read_value(const char *path, char *buf, size_t len)
{
	ssize_t n = file_read(path, buf, len);

	if (n < 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

const char *proc_stat_at(const char *line, int field)
{
	const char *p = strrchr(line, ')');

	if (!p || p[1] != ' ' || !p[2])
		return NULL;
	p += 2; /* the state, field 3 */
	for (int i = 3; i < field; i++) {
		p = strchr(p, ' ');
		if (!p)
			return NULL;
		p++;
	}
	return p;
}

long long file_read_ll(const char *path)
{
	char buf[64];

	if (file_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 0);
}

char *fd_read_all(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap), *bigger;
	ssize_t r;

	if (!buf)
		return NULL;
	while ((r = read(fd, buf + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (n + 1 == cap) {
			bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	if (r < 0) {
		int e = errno;

		free(buf);
		errno = e;
		return NULL;
	}
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

char *file_read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = fd_read_all(fd, len);
	e = errno;
	close(fd);
	errno = e;
	return buf;
}

int file_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), e;
	size_t len = strlen(val);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, len);
	e = n < 0 ? errno : EIO;
	close(fd);
	if (n == (ssize_t)len)
		return 0;
	errno = e;
	return -1;
}

bool release_at_least(const char *release, long major, long minor)
{
	char *p;
	long ma, mi;

	ma = strtol(release, &p, 10);
	if (p == release)
		return true;
	mi = *p == '.' ? strtol(p + 1, NULL, 10) : 0;
	return ma > major || (ma == major && mi >= minor);
}

bool kernel_at_least(long major, long minor)
{
	struct utsname u;

	return uname(&u) || release_at_least(u.release, major, minor);
}

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
