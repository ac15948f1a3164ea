// SPDX-License-Identifier: GPL-2.0
/*
 * The files csfcat mem reads and writes (csfcat_mem.h): sysfs, procfs and /boot, under the test
 * root when there is one; what they say about the machine (its System RAM, its kernel's release
 * and config) and about a kdamond thread (its CPU time, its age).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "csfcat.h"
#include "csfcat_mem.h"
#include "util.h"

const char *mem_test_root = "";

const char *mem_at_root(const char *path, char *buf, size_t len)
{
	if (!*mem_test_root)
		return path;
	snprintf(buf, len, "%s%s", mem_test_root, path);
	return buf;
}

int mem_read_file(const char *path, char *buf, size_t len)
{
	char rp[PATH_MAX];

	return file_read_value(mem_at_root(path, rp, sizeof(rp)), buf, len);
}

/* A number just parsed from buf by strtoull() or strtoll(), which stopped at end: 0, or -1. */
static int num_parsed(const char *buf, const char *end)
{
	if (errno || end == buf) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int mem_read_u64(const char *path, uint64_t *v)
{
	char buf[64], *end;

	if (mem_read_file(path, buf, sizeof(buf)))
		return -1;
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return num_parsed(buf, end);
}

int mem_read_i64(const char *path, int64_t *v)
{
	char buf[64], *end;

	if (mem_read_file(path, buf, sizeof(buf)))
		return -1;
	errno = 0;
	*v = strtoll(buf, &end, 0);
	return num_parsed(buf, end);
}

int mem_write_file(const char *path, const char *val)
{
	char rp[PATH_MAX];

	return file_write(mem_at_root(path, rp, sizeof(rp)), val);
}

bool mem_exists(const char *path)
{
	char rp[PATH_MAX];

	return access(mem_at_root(path, rp, sizeof(rp)), F_OK) == 0;
}

int mem_file_error(const char *what, const char *path)
{
	int e = errno;

	if (e == EACCES || e == EPERM)
		mem_err("%s %s: %s (DAMON's files are root's only: run csfcat mem as root)", what,
			path, strerror(e));
	else
		mem_err("%s %s: %s", what, path, strerror(e));
	return EXIT_FAILURE;
}

/* Field N (1-based, as proc(5) counts them; N >= 4) of /proc/PID/stat: a number. */
static int proc_stat_field(pid_t pid, int field, uint64_t *v)
{
	char path[64], buf[1024], *end;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (mem_read_file(path, buf, sizeof(buf)))
		return -1;
	p = proc_stat_at(buf, field);
	if (p) {
		errno = 0;
		*v = strtoull(p, &end, 10);
		if (!errno && end != p)
			return 0;
	}
	errno = EINVAL;
	return -1;
}

/* The kdamond's CPU time in ns: schedstat's first field, else utime + stime in ticks. */
static int thread_cpu_ns(pid_t pid, uint64_t *ns)
{
	char path[64];
	uint64_t ut, st;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if (!mem_read_u64(path, ns))
		return 0;
	if (proc_stat_field(pid, 14, &ut) || proc_stat_field(pid, 15, &st))
		return -1;
	*ns = (ut + st) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
	return 0;
}

int mem_thread_age_s(pid_t pid, double *age)
{
	char buf[128], *end;
	uint64_t start;
	double up;

	if (proc_stat_field(pid, 22, &start) || mem_read_file("/proc/uptime", buf, sizeof(buf)))
		return -1;
	up = strtod(buf, &end);
	if (end == buf) {
		errno = EINVAL;
		return -1;
	}
	*age = up - (double)start / (double)sysconf(_SC_CLK_TCK);
	return 0;
}

/* Root only: others read zeros. */
int mem_system_ram(struct mem_ram *r)
{
	char rp[PATH_MAX], line[256];
	FILE *f = fopen(mem_at_root("/proc/iomem", rp, sizeof(rp)), "re");
	bool any = false;

	if (!f)
		return -1;
	memset(r, 0, sizeof(*r));
	while (fgets(line, sizeof(line), f)) {
		char *p;
		uint64_t s, e;

		/* Top-level lines only: "START-END : System RAM", in hex. */
		if (!isxdigit((unsigned char)line[0]))
			continue;
		s = strtoull(line, &p, 16);
		if (*p != '-')
			continue;
		e = strtoull(p + 1, &p, 16);
		if (strncmp(p, " : System RAM", 13) != 0 || (p[13] != '\n' && p[13]))
			continue;
		if (!any)
			r->first = s;
		r->last = e + 1;
		if (e + 1 - s > r->big_end - r->big_start) {
			r->big_start = s;
			r->big_end = e + 1;
		}
		any = true;
	}
	fclose(f);
	if (!any || !r->last) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

void mem_kernel_release(char *buf, size_t len)
{
	struct utsname u;

	if (!mem_read_file("/proc/sys/kernel/osrelease", buf, len) && *buf)
		return;
	snprintf(buf, len, "%s", uname(&u) ? "?" : u.release);
}

bool mem_kernel_at_least(long major, long minor)
{
	char rel[128];

	mem_kernel_release(rel, sizeof(rel));
	return release_at_least(rel, major, minor);
}

static uint64_t self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

void mem_cpu_cost(struct mem_report *m, struct mem_cpu *prev)
{
	uint64_t ns, self = self_cpu_ns();
	double now = mem_mono_s();

	m->cpu_ms_per_s = -1;
	m->self_ms_per_s = -1;
	if (m->kdamond <= 0 || thread_cpu_ns(m->kdamond, &ns) || now <= prev->at_s ||
	    ns < prev->kdamond_ns)
		return;
	m->cpu_window_s = now - prev->at_s;
	m->cpu_ms_per_s = (double)(ns - prev->kdamond_ns) / 1e6 / m->cpu_window_s;
	if (self >= prev->self_ns)
		m->self_ms_per_s = (double)(self - prev->self_ns) / 1e6 / m->cpu_window_s;
	m->cpu_since_start = prev->first;
	prev->first = false;
	prev->kdamond_ns = ns;
	prev->self_ns = self;
	prev->at_s = now;
}

char mem_kconfig(const char *name)
{
	char rel[128], path[256], rp[PATH_MAX], line[256];
	size_t len = strlen(name);
	char v = '?';
	FILE *f;

	mem_kernel_release(rel, sizeof(rel));
	snprintf(path, sizeof(path), "/boot/config-%s", rel);
	f = fopen(mem_at_root(path, rp, sizeof(rp)), "re");
	if (!f)
		return v;
	v = 'n';
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) && line[len] == '=') {
			v = line[len + 1];
			break;
		}
	}
	fclose(f);
	return v;
}
