/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tk.h: what the reliability tests (t_fault, t_fuzz, t_soak and the stress tests) share on top
 * of t.h: a seeded random generator, the kernel log's reports, kmemleak.
 *
 * Kernel reports: the records of /dev/kmsg that tests/harness/guest.sh would fail a run on. A test
 * that provokes kernel messages on purpose (an allocation failure's stack dump) brackets them with
 * the harness's noise markers; between them only the reports that no provoked message looks like
 * (KASAN, lockdep, UBSAN, ...) count, as in the harness.
 */
#ifndef CSF_TESTS_TK_H
#define CSF_TESTS_TK_H

#include "t.h"

#include <fcntl.h>
#include <regex.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel-log patterns (tests/klog-patterns), as tests/harness/stage-guest.sh puts them in the
 * guest. */
#define TK_KLOG_PATTERNS "/csf/klog-patterns"
#define TK_NOISE_BEGIN "csf-harness: expected kernel messages begin"
#define TK_NOISE_END "csf-harness: expected kernel messages end"

/* splitmix64: every random choice of a test comes from one seed, so a run can be replayed. */
static inline uint64_t tk_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t tk_below(uint64_t *s, uint64_t n)
{
	return n ? tk_rand(s) % n : 0;
}

/*
 * Whether the cpu page's sum row (rows[0]) is, in every time field, the sum of the n - 1 CPU
 * rows after it, as the module builds it.
 */
static inline bool tk_cpu_sum_ok(const struct csf_cpu_row *rows, int n)
{
	for (size_t f = 0; f < offsetof(struct csf_cpu_row, online); f += sizeof(uint64_t)) {
		uint64_t sum = 0, v;

		for (int i = 1; i < n; i++) {
			memcpy(&v, (const char *)&rows[i] + f, sizeof(v));
			sum += v;
		}
		memcpy(&v, (const char *)&rows[0] + f, sizeof(v));
		if (sum != v)
			return false;
	}
	return true;
}

/* Load the module from the file ko and mount it (after a test unloaded it). */
static inline int tk_load_module(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -1;
	r = (int)syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	if (r)
		return -1;
	return mount("none", CSF_MOUNT_POINT, CSF_FS_TYPE, 0, NULL);
}

/* debugfs, where kmemleak and the fault-injection knobs live; 0 when it is there. */
static inline int tk_debugfs(void)
{
	struct stat st;

	if (stat("/sys/kernel/debug/kmemleak", &st) == 0 ||
	    stat("/sys/kernel/debug/failslab", &st) == 0)
		return 0;
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	return stat("/sys/kernel/debug", &st);
}

/* ---- The kernel log ---- */

struct tk_kmsg {
	int fd;
	bool noise; /* between the markers */
	regex_t bad, fatal;
};

/*
 * Compile one list of the kernel-log patterns file ("LIST PATTERN" lines, see
 * tests/klog-patterns): its patterns joined with "|", as the shell checks join them. Ends the
 * program when the file or the list is missing: a test must not go on without the checks.
 */
static inline void tk_klog_list(regex_t *re, const char *list)
{
	const char *path = getenv("CSF_KLOG_PATTERNS");
	size_t len = strlen(list), used = 0;
	char line[256], all[4096];
	FILE *f;

	if (!path)
		path = TK_KLOG_PATTERNS;
	f = fopen(path, "r");

	if (!f)
		t_die("kernel-log patterns: %s", path);
	all[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, list, len) != 0 || line[len] != ' ')
			continue;
		used += (size_t)snprintf(all + used, sizeof(all) - used, "%s%s", used ? "|" : "",
					 line + len + 1);
		if (used >= sizeof(all))
			t_die("kernel-log patterns: list %s too long", list);
	}
	fclose(f);
	if (!used)
		t_die("kernel-log patterns: no list %s in %s", list, path);
	if (regcomp(re, all, REG_EXTENDED | REG_NOSUB))
		t_die("kernel-log patterns: list %s does not compile", list);
}

/* Start reading the kernel log from now on; false when it cannot be read (then no checks). */
static inline bool tk_kmsg_open(struct tk_kmsg *k)
{
	memset(k, 0, sizeof(*k));
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd < 0)
		return false;
	lseek(k->fd, 0, SEEK_END);
	tk_klog_list(&k->bad, "bad");
	tk_klog_list(&k->fatal, "fatal");
	return true;
}

/*
 * The next record's message from a /dev/kmsg descriptor opened O_NONBLOCK, in rec (len bytes);
 * NULL when none is left. Records overwritten before they were read are skipped (EPIPE).
 */
static inline char *tk_kmsg_next(int fd, char *rec, size_t len)
{
	ssize_t n;

	/* One record per read(); EAGAIN when there is no more. */
	while ((n = read(fd, rec, len - 1)) != 0) {
		char *msg;

		if (n < 0) {
			if (errno == EPIPE)
				continue;
			return NULL;
		}
		rec[n] = 0;
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		*strchrnul(msg, '\n') = 0; /* the message; the dictionary lines follow */
		return msg;
	}
	return NULL;
}

/* The reports logged since the last call, each printed as a "#" line. */
static inline int tk_kmsg_reports(struct tk_kmsg *k)
{
	char rec[8192], *msg;
	int reports = 0;

	if (k->fd < 0)
		return 0;
	while ((msg = tk_kmsg_next(k->fd, rec, sizeof(rec)))) {
		if (strstr(msg, TK_NOISE_BEGIN))
			k->noise = true;
		else if (strstr(msg, TK_NOISE_END))
			k->noise = false;
		else if (!regexec(k->noise ? &k->fatal : &k->bad, msg, 0, NULL, 0)) {
			printf("# kernel: %s\n", msg);
			reports++;
		}
	}
	fflush(stdout);
	return reports;
}

static inline void tk_noise(bool begin, const char *why)
{
	char line[128];

	snprintf(line, sizeof(line), "%s (%s)\n", begin ? TK_NOISE_BEGIN : TK_NOISE_END, why);
	file_write("/dev/kmsg", line);
}

/* ---- kmemleak (CONFIG_DEBUG_KMEMLEAK) ---- */

#define TK_KMEMLEAK "/sys/kernel/debug/kmemleak"

static inline bool tk_kmemleak_present(void)
{
	tk_debugfs();
	return access(TK_KMEMLEAK, W_OK) == 0;
}

/* Forget what is unreferenced now: later scans report only what leaks from here on. */
static inline void tk_kmemleak_forget(void)
{
	file_write(TK_KMEMLEAK, "scan");
	file_write(TK_KMEMLEAK, "clear");
}

/*
 * Scan and count the unreferenced objects reported since tk_kmemleak_forget(), printing them.
 * kmemleak reports only objects older than 5 s, so wait that long after the last free.
 */
static inline int tk_kmemleak_count(void)
{
	static char buf[1 << 16];
	int n = 0;

	t_sleep_ns(5500000000ull);
	file_write(TK_KMEMLEAK, "scan");
	if (file_read(TK_KMEMLEAK, buf, sizeof(buf)) < 0)
		return -1;
	for (char *p = buf; (p = strstr(p, "unreferenced object")); p++)
		n++;
	if (n)
		printf("# kmemleak:\n%s\n", buf);
	return n;
}

#endif /* CSF_TESTS_TK_H */
