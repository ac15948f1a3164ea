// SPDX-License-Identifier: GPL-2.0
/*
 * t_fault: allocation failures on the module's paths, injected one at a time with failslab and
 * fail_page_alloc (CONFIG_FAULT_INJECTION; the debug suite's kernel has it, Debian's do not).
 *
 * For each operation below and each n = 1, 2, ..., a fresh thread writes n to its
 * /proc/thread-self/fail-nth and runs the operation: the n-th allocation it makes fails. The
 * loop ends at the first n that the operation completes without reaching. Two rounds: "module"
 * counts only allocations made with the module's code on the stack (the fault attributes'
 * require-start/end set to the module's text), "all" every allocation of the system calls.
 * Every failure must reach the caller as ENOMEM (the library's calls return -1 with it, and
 * work again afterwards), every success must give a valid page, and nothing may leak: the
 * module's reference count returns to where it was after each try, and kmemleak (where the
 * kernel has it) finds nothing unreferenced at the end.
 *
 * Then hotplug: the cpu page covers every possible CPU, so a CPU coming or going allocates
 * nothing. With every allocation from the module's code set to fail, in any task, cpu1 goes
 * offline and online while the page is in use: not one failure may be injected. Last, random
 * failures (probability 20%, module allocations only) while 6 threads open and map both files.
 */
#include "../tk.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/wait.h>

#define THREAD_PATH CSF_MOUNT_POINT "/" CSF_THREAD_FILE
#define CPU_PATH CSF_MOUNT_POINT "/" CSF_CPU_FILE
#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"
#define DBG "/sys/kernel/debug/"
#define MAX_POINTS 2000

static const char *const attrs[] = { "failslab", "fail_page_alloc" };
static unsigned long mod_start, mod_end;
static unsigned long kml_start, kml_end; /* kmemleak's code, never failed (see below) */
static bool stacks; /* each failure's stack in the kernel log (verbose 2), not one line */
static int base_refs;

static int set_attr(const char *attr, const char *knob, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), DBG "%s/%s", attr, knob);
	return file_write(path, val);
}

static long long get_attr(const char *attr, const char *knob)
{
	char path[128];

	snprintf(path, sizeof(path), DBG "%s/%s", attr, knob);
	return file_read_ll(path);
}

/*
 * Fail on request only (fail-nth, or a probability set later), for every gfp mask and order;
 * within [start, end) of the stack's return addresses.
 */
static void setup_attrs(unsigned long start, unsigned long end, int probability, int times)
{
	char s[32], e[32], p[16], t[16];

	snprintf(s, sizeof(s), "%lu", start);
	snprintf(e, sizeof(e), "%lu", end);
	snprintf(p, sizeof(p), "%d", probability);
	snprintf(t, sizeof(t), "%d", times);
	for (size_t i = 0; i < 2; i++) {
		set_attr(attrs[i], "probability", "0"); /* first: no failure while changing */
		set_attr(attrs[i], "interval", "1");
		set_attr(attrs[i], "times", t);
		set_attr(attrs[i], "task-filter", "N");
		set_attr(attrs[i], "verbose", stacks ? "2" : "1");
		set_attr(attrs[i], "ignore-gfp-wait", "N");
		set_attr(attrs[i], "require-start", "0");
		set_attr(attrs[i], "require-end", e);
		set_attr(attrs[i], "require-start", s);
		if (kml_end) {
			char a[32], b[32];

			snprintf(a, sizeof(a), "%lu", kml_start);
			snprintf(b, sizeof(b), "%lu", kml_end);
			set_attr(attrs[i], "reject-end", b);
			set_attr(attrs[i], "reject-start", a);
		}
		set_attr(attrs[i], "probability", p);
	}
	set_attr("fail_page_alloc", "min-order", "0");
	set_attr("fail_page_alloc", "ignore-gfp-highmem", "N");
}

/* Back to the kernel's defaults. */
static void reset_attrs(void)
{
	kml_start = kml_end = 0;
	for (size_t i = 0; i < 2; i++) {
		set_attr(attrs[i], "reject-start", "0");
		set_attr(attrs[i], "reject-end", "0");
	}
	setup_attrs(0, ~0ul, 0, 1);
	for (size_t i = 0; i < 2; i++)
		set_attr(attrs[i], "ignore-gfp-wait", "Y");
	set_attr("fail_page_alloc", "min-order", "1");
	set_attr("fail_page_alloc", "ignore-gfp-highmem", "Y");
}

/*
 * The module's code: from its lowest executable section up to the first other section above
 * the highest one (the sections' addresses, readable by root).
 */
static bool module_text(unsigned long *start, unsigned long *end)
{
	const char *dir = "/sys/module/coarse_stat_fs/sections";
	unsigned long lo = ~0ul, hi = 0, above = ~0ul;
	unsigned long addr[64];
	bool exec[64];
	struct dirent *d;
	int n = 0;
	DIR *dp = opendir(dir);

	if (!dp)
		return false;
	while ((d = readdir(dp)) && n < 64) {
		char path[320], buf[32];

		if (d->d_name[0] != '.' || !strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (file_read(path, buf, sizeof(buf)) <= 0)
			continue;
		addr[n] = strtoul(buf, NULL, 0); /* kernel addresses: above LLONG_MAX */
		exec[n] = strstr(d->d_name, "text") || !strcmp(d->d_name, ".altinstr_replacement");
		/* .init.text is freed after loading; its range may be reused */
		if (strstr(d->d_name, "init"))
			continue;
		if (exec[n]) {
			lo = addr[n] < lo ? addr[n] : lo;
			hi = addr[n] > hi ? addr[n] : hi;
		}
		n++;
	}
	closedir(dp);
	for (int i = 0; i < n; i++)
		if (!exec[i] && addr[i] > hi && addr[i] < above)
			above = addr[i];
	if (lo == ~0ul)
		return false;
	*start = lo;
	*end = above != ~0ul ? above : hi + 0x10000;
	return true;
}

/*
 * kmemleak's own metadata allocations, made inside every allocation of the module, are not the
 * module's to handle: failed, kmemleak prints a warning under its object lock, which lockdep
 * then reports as a circular dependency with the scheduler (through kfree_rcu during hotplug).
 * Keep injection out of kmemleak's code: the span of its kmemleak_* functions in kallsyms
 * around kmemleak_alloc().
 */
static void kmemleak_text(void)
{
	char line[256], name[128], type;
	unsigned long addr;
	FILE *f = fopen("/proc/kallsyms", "re");

	unsigned long center = 0;

	/* kmemleak_alloc() first: the file's other functions lie within 64 KiB of it. */
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %127s", &addr, &type, name) == 3 &&
		    !strcmp(name, "kmemleak_alloc"))
			center = addr;
	if (f)
		rewind(f);
	while (center && f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %127s", &addr, &type, name) != 3 ||
		    (type != 't' && type != 'T') || strncmp(name, "kmemleak", 8) != 0 ||
		    addr + 0x10000 < center || addr > center + 0x10000)
			continue;
		if (!kml_start || addr < kml_start)
			kml_start = addr;
		if (addr + 0x1000 > kml_end)
			kml_end = addr + 0x1000;
	}
	if (f)
		fclose(f);
}

/* ---- fail-nth ---- */

/*
 * The calling thread's fail-nth while armed. What is left of it is read into a page that fork()
 * does not write-protect (MADV_DONTFORK): after a fork, the kernel's write into a copy-on-write
 * page (read() into the stack) allocates, and the armed failure would make it EFAULT.
 */
static _Thread_local int nth_fd = -1;
static _Thread_local char *nth_buf;
static _Thread_local long nth_left = -1;

/* Stop injecting; nth_left is what was left (0: the failure was injected), -1 on error. */
static void nth_disarm(void)
{
	ssize_t n;

	if (nth_fd < 0)
		return;
	n = pread(nth_fd, nth_buf, 31, 0);
	if (write(nth_fd, "0", 1) != 1)
		n = -1;
	close(nth_fd);
	nth_fd = -1;
	if (n <= 0)
		return;
	nth_buf[n] = 0;
	nth_left = strtol(nth_buf, NULL, 10);
}

/* ---- The operations: 0, or the errno of the call that failed ---- */

static int sum_ok(const struct csf_snap *s)
{
	uint64_t sum = 0;

	for (int i = 0; i < CSF_NR_STATES; i++)
		sum += s->p.cyc[i];
	return sum == s->tsc - s->p.start_tsc;
}

/* The library maps the calling (fresh) thread's page; a failure must leave it able to retry. */
static int op_thread_lib(void)
{
	struct csf_snap s;
	int e;

	if (csf_thread_snap(&s) == 0)
		return sum_ok(&s) && s.p.tid == (uint32_t)gettid() ? 0 : -2;
	e = errno;
	/* fail-nth has fired (or run out): the library must work again at once */
	if (csf_thread_snap(&s) || !sum_ok(&s))
		return -3;
	return e;
}

static int map_and_check(const char *path, unsigned int kind)
{
	struct stat st;
	const struct csf_hdr *h;
	int fd = open(path, O_RDONLY), e;

	if (fd < 0)
		return errno;
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		return e;
	}
	h = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	e = errno;
	close(fd);
	if (h == MAP_FAILED)
		return e;
	e = h->magic == CSF_MAGIC && h->kind == kind ? 0 : -2;
	munmap((void *)h, (size_t)st.st_size);
	return e;
}

static int op_thread_raw(void)
{
	return map_and_check(THREAD_PATH, CSF_KIND_THREAD);
}

/* The first open of the cpu file allocates the page; this process keeps it unmapped between. */
static int op_cpu_lib(void)
{
	struct csf_cpu_snap c;
	int e;

	if (csf_cpu_snap(&c, CSF_CPU_ALL) == 0) {
		csf_cpu_unmap();
		return c.row.cpu == CSF_CPU_ALL ? 0 : -2;
	}
	e = errno;
	if (csf_cpu_snap(&c, CSF_CPU_ALL))
		return -3;
	csf_cpu_unmap();
	return e;
}

static int op_cpu_raw(void)
{
	return map_and_check(CPU_PATH, CSF_KIND_CPU);
}

/* Mounting builds the superblock and the two files (root's business, but allocations too). */
static int op_mount(void)
{
	if (mount("none", CSF_MOUNT_POINT, CSF_FS_TYPE, 0, NULL))
		return errno;
	return 0;
}

/* Both pages mapped before the failures start (fork's prep), unmapped after (its done). */
static void map_both(void)
{
	struct csf_snap s;
	struct csf_cpu_snap c;

	if (csf_thread_snap(&s) || csf_cpu_snap(&c, CSF_CPU_ALL))
		t_die("mapping both pages");
}

/* A process with both pages mapped forks: the thread page is not copied, the cpu page is. */
static int op_fork(void)
{
	int status;
	pid_t pid = fork();

	if (pid > 0)
		nth_disarm(); /* before the parent's copy-on-write stack is written from the kernel */
	if (pid < 0)
		return errno;
	if (pid == 0) {
		struct csf_cpu_snap c;

		_exit(csf_cpu_snap(&c, CSF_CPU_ALL) == 0 ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -4;
	return 0;
}

struct op {
	const char *name;
	int (*fn)(void);
	void (*prep)(void); /* before the failures start, in the same thread */
	void (*done)(void); /* after they stop */
};

/* The operations' names, which their scenarios' names begin with. */
#define OP_THREAD_LIB "thread-self through the library"
#define OP_THREAD_RAW "thread-self open and mmap"
#define OP_CPU_LIB "cpu through the library"
#define OP_CPU_RAW "cpu open and mmap"
#define OP_MOUNT "mount"
#define OP_FORK "fork with both pages mapped"

static const struct op op_thread_lib_ = { OP_THREAD_LIB, op_thread_lib, NULL, NULL };
static const struct op op_thread_raw_ = { OP_THREAD_RAW, op_thread_raw, NULL, NULL };
static const struct op op_cpu_lib_ = { OP_CPU_LIB, op_cpu_lib, NULL, NULL };
static const struct op op_cpu_raw_ = { OP_CPU_RAW, op_cpu_raw, NULL, NULL };
static const struct op op_mount_ = { OP_MOUNT, op_mount, NULL, NULL };
static const struct op op_fork_ = { OP_FORK, op_fork, map_both, csf_cpu_unmap };

struct point {
	const struct op *op;
	unsigned int n;
	int result; /* the operation's */
	long remaining; /* fail-nth afterwards: 0 when the failure was injected */
};

static void *point_thread(void *arg)
{
	struct point *pt = arg;
	char buf[32];
	int fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);

	pt->remaining = -1;
	if (fd < 0)
		return NULL;
	nth_buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (nth_buf == MAP_FAILED || madvise(nth_buf, 4096, MADV_DONTFORK)) {
		close(fd);
		return NULL;
	}
	nth_buf[0] = 0; /* present before the failures start */
	if (pt->op->prep)
		pt->op->prep();
	snprintf(buf, sizeof(buf), "%u", pt->n);
	if (write(fd, buf, strlen(buf)) < 0) {
		close(fd);
		munmap(nth_buf, 4096);
		return NULL;
	}
	nth_fd = fd;
	nth_left = -1;
	pt->result = pt->op->fn();
	nth_disarm(); /* if the operation has not */
	pt->remaining = nth_left;
	munmap(nth_buf, 4096);
	if (pt->op->done)
		pt->op->done();
	return NULL;
}

struct tally {
	unsigned int points, failed, succeeded;
	unsigned int by_errno[256];
};

static void print_tally(const char *mode, const char *name, const struct tally *t)
{
	char errs[256] = "";
	size_t len = 0;

	for (int e = 0; e < 256; e++)
		if (t->by_errno[e] && len < sizeof(errs) - 32)
			len += (size_t)snprintf(errs + len, sizeof(errs) - len, "%s%s=%u",
						len ? "," : "", strerrorname_np(e), t->by_errno[e]);
	printf("FIGURE fault %s points %u failed %u succeeded %u errors-by-errno %s (%s)\n", mode,
	       t->points, t->failed, t->succeeded, len ? errs : "none", name);
}

/* Inject at each allocation of op in turn; false if anything went wrong (already reported). */
static bool enumerate(const char *mode, const struct op *op, struct tally *total)
{
	struct tally t = { 0 };
	bool ok = true;
	unsigned int n;

	for (n = 1; n <= MAX_POINTS; n++) {
		struct point pt = { .op = op, .n = n };
		pthread_t th;
		int refs;

		if (op->fn == op_mount)
			umount2(CSF_MOUNT_POINT, 0);
		if (pthread_create(&th, NULL, point_thread, &pt))
			t_die("pthread_create");
		pthread_join(th, NULL);
		if (op->fn == op_mount && pt.result != 0 && op_mount() != 0) {
			printf("#   FAIL %s: cannot mount again after n=%u: %s\n", op->name, n,
			       strerror(errno));
			ok = false;
		}
		if (pt.remaining < 0) {
			printf("#   FAIL %s: fail-nth unusable\n", op->name);
			return false;
		}
		refs = t_module_refs_settle(base_refs);
		if (refs != base_refs) {
			printf("#   FAIL %s, n=%u: module references %d, expected %d (a leak)\n",
			       op->name, n, refs, base_refs);
			ok = false;
		}
		if (pt.result < 0) {
			printf("#   FAIL %s, n=%u: %s\n", op->name, n,
			       pt.result == -2 ?
				       "the page it mapped is not valid" :
			       pt.result == -3 ?
				       "the library did not work again after the failure" :
				       "a child failed");
			ok = false;
		}
		if (pt.remaining > 0) /* done: the operation made fewer than n allocations */
			break;
		t.points++;
		if (pt.result == 0) {
			t.succeeded++;
		} else if (pt.result > 0) {
			t.failed++;
			t.by_errno[pt.result & 255]++;
			if (pt.result != ENOMEM) {
				printf("#   FAIL %s, n=%u: failed with %s, expected ENOMEM\n",
				       op->name, n, strerrorname_np(pt.result));
				ok = false;
			}
		}
	}
	if (n > MAX_POINTS) {
		printf("#   FAIL %s: more than %d allocations\n", op->name, MAX_POINTS);
		ok = false;
	}
	print_tally(mode, op->name, &t);
	total->points += t.points;
	total->failed += t.failed;
	total->succeeded += t.succeeded;
	return ok;
}

/* ---- Random failures while threads open and map ---- */

static atomic_int stop;
static atomic_long r_ops, r_enomem, r_other;

/* A fresh thread's first snapshot: 0 or its errno (no retry: failures are random here). */
static int op_thread_lib_once(void)
{
	struct csf_snap s;

	if (csf_thread_snap(&s))
		return errno;
	return sum_ok(&s) ? 0 : -2;
}

static const struct op random_lib = { "library", op_thread_lib_once, NULL, NULL };

static void *random_worker(void *arg)
{
	uint64_t seed = (uint64_t)(long)arg;

	while (!atomic_load(&stop)) {
		int e;

		switch (tk_below(&seed, 3)) {
		case 0:
			e = op_thread_raw();
			break;
		case 1:
			e = op_cpu_raw();
			break;
		default: {
			pthread_t th;
			struct point pt = { .op = &random_lib, .n = 0 };

			/* n = 0: fail-nth off; the probability does the failing */
			if (pthread_create(&th, NULL, point_thread, &pt)) {
				e = -5;
				break;
			}
			pthread_join(th, NULL);
			e = pt.result;
		}
		}
		atomic_fetch_add(&r_ops, 1);
		if (e == ENOMEM)
			atomic_fetch_add(&r_enomem, 1);
		else if (e)
			atomic_fetch_add(&r_other, 1);
	}
	return NULL;
}

/*
 * glibc registers an rseq area for each thread, which the kernel writes on the way back to user
 * space after a preemption. After fork() the parent's area is copy-on-write, so that write
 * allocates, and when it meets the armed failure the kernel kills the process with SIGSEGV
 * (rseq_handle_notify_resume(), force_sigsegv()). Run without rseq: exec again with glibc's
 * tunable (2.35) set.
 */
static void without_rseq(char **argv)
{
	const char *t = getenv("GLIBC_TUNABLES");
	char val[512], self[4096];
	ssize_t n;

	if (t && strstr(t, "glibc.pthread.rseq=0")) {
		printf("#   rseq %s\n", __rseq_size ? "still registered" : "off");
		return;
	}
	snprintf(val, sizeof(val), "%s%sglibc.pthread.rseq=0", t ? t : "", t ? ":" : "");
	setenv("GLIBC_TUNABLES", val, 1);
	/* by its own path, not /proc/self/exe: the kernel's messages then name t_fault, not exe */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		t_die("readlink /proc/self/exe");
	self[n] = 0;
	execv(self, argv);
	t_die("exec %s", self);
}

/* ---- The scenarios ---- */

#define NO_FAULT_INJECTION                                                                      \
	"the kernel lacks CONFIG_FAULT_INJECTION with FAILSLAB, FAIL_PAGE_ALLOC and the stack " \
	"filter (Debian's release kernels do; the debug suite has them)"

static bool fault_injection(void)
{
	return !access("/proc/thread-self/fail-nth", W_OK) && !tk_debugfs() &&
	       !access(DBG "failslab/require-start", W_OK) &&
	       !access(DBG "fail_page_alloc/min-order", W_OK);
}

/* The module's text and kmemleak's, found by the first scenario that needs them. */
static bool find_texts(void)
{
	static bool found;

	if (!found && module_text(&mod_start, &mod_end)) {
		kmemleak_text();
		found = true;
	}
	return found;
}

/* Whether kmemleak checks this run, and the totals of the enumerations: program-wide. */
static bool leaks_checked;
static struct tally total;

/*
 * What a scenario after the first starts with: SKIP where the kernel cannot inject faults (as
 * the first does), the module's text, and its reference count at rest in base_refs.
 */
#define FAULT_SETUP()                                                   \
	do {                                                            \
		if (!fault_injection())                                 \
			SKIP(NO_FAULT_INJECTION);                       \
		REQUIRE(find_texts(), "cannot find the module's text"); \
		t_sleep_ns(20000000);                                   \
		base_refs = t_module_refs();                            \
	} while (0)

SCENARIO(available, "fault injection is available")
{
	if (!fault_injection())
		SKIP(NO_FAULT_INJECTION);
	REQUIRE(find_texts(), "cannot find the module's text");
	printf("#   module text %#lx-%#lx\n", mod_start, mod_end);
	if (kml_end)
		printf("#   kmemleak's text, not failed: %#lx-%#lx\n", kml_start, kml_end);
}

/* Inject at each allocation of op in turn, those from the module's code (module) or all. */
static void every_failure(bool module, const struct op *op)
{
	struct tally t = { 0 };

	if (module)
		setup_attrs(mod_start, mod_end, 0, -1);
	else
		setup_attrs(0, ~0ul, 0, -1);
	CHECK(enumerate(module ? "module" : "all", op, &t), "see above");
	/* In the module round each operation must allocate through the module. */
	if (module)
		CHECK(t.points > 0, "no allocation from the module's code was seen");
	total.points += t.points;
	total.failed += t.failed;
	total.succeeded += t.succeeded;
}

/*
 * A scenario of every_failure(): one per operation and round (FIXTURE_VARIANT's idea), named as
 * before: "OPERATION: every failure of ROUND allocations is clean".
 */
#define EVERY_FAILURE(fn, op, name, round)                                     \
	SCENARIO(fn, name ": every failure of " round " allocations is clean") \
	{                                                                      \
		FAULT_SETUP();                                                 \
		every_failure(!strcmp(round, "module"), &(op));                \
	}

/* No fork in the module round: fork runs no module code, there is nothing to count. */
EVERY_FAILURE(thread_lib_module, op_thread_lib_, OP_THREAD_LIB, "module")
EVERY_FAILURE(thread_raw_module, op_thread_raw_, OP_THREAD_RAW, "module")
EVERY_FAILURE(cpu_lib_module, op_cpu_lib_, OP_CPU_LIB, "module")
EVERY_FAILURE(cpu_raw_module, op_cpu_raw_, OP_CPU_RAW, "module")
EVERY_FAILURE(mount_module, op_mount_, OP_MOUNT, "module")
EVERY_FAILURE(thread_lib_all, op_thread_lib_, OP_THREAD_LIB, "all")
EVERY_FAILURE(thread_raw_all, op_thread_raw_, OP_THREAD_RAW, "all")
EVERY_FAILURE(cpu_lib_all, op_cpu_lib_, OP_CPU_LIB, "all")
EVERY_FAILURE(cpu_raw_all, op_cpu_raw_, OP_CPU_RAW, "all")
EVERY_FAILURE(mount_all, op_mount_, OP_MOUNT, "all")
EVERY_FAILURE(fork_all, op_fork_, OP_FORK, "all")

/*
 * Wait until the module's reference count has stayed put for half a second (10 s at most): the
 * objects of threads that exited before are freed in RCU callbacks, which run the module's code
 * and allocate (KASAN's record of the free) at a time no test chooses.
 */
static void refs_at_rest(void)
{
	int r = t_module_refs(), same = 0;

	for (int i = 0; i < 1000 && same < 50; i++) {
		int now;

		t_sleep_ns(10000000);
		now = t_module_refs();
		same = now == r ? same + 1 : 0;
		r = now;
	}
}

/* Where, from the allocation outward, a stack leaves an interrupt for the code it interrupted. */
static bool interrupt_edge(const char *frame)
{
	static const char *const edges[] = {
		"</IRQ>",	  " asm_sysvec_", " asm_common_interrupt", " asm_exc_nmi", /* x86 */
		" el1_interrupt", " el1h_64_irq", " el1h_64_fiq", /* arm64 */
	};

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		if (strstr(frame, edges[i]))
			return true;
	return false;
}

/*
 * Of the failures forced since fd (/dev/kmsg) was opened, each logged with its stack, how many
 * an interrupt asked for: the stack filter fails every allocation with one of the module's
 * frames in its stack, and so also one made by an interrupt that arrived while the module's
 * code ran (a timer's debug object, KASAN's stack depot, on a debug kernel), which the module
 * did not make. From the allocation outward, the end of the interrupt comes before any frame
 * of the module's. The first three stacks are printed.
 */
static int interrupts_failed(int fd)
{
	char rec[8192], *msg;
	int failures = 0, interrupted = 0, lines = 0;
	bool deciding = false;

	while ((msg = tk_kmsg_next(fd, rec, sizeof(rec)))) {
		if (strstr(msg, "FAULT_INJECTION: forcing a failure")) {
			failures++;
			deciding = true;
			lines = 0;
		}
		if (failures && failures <= 3 && lines++ < 60)
			printf("#   kernel: %s\n", msg);
		/* "? ": an address the unwinder found on the stack, not a frame it walked */
		if (!deciding || !strncmp(msg + strspn(msg, " "), "? ", 2))
			continue;
		if (strstr(msg, "[coarse_stat_fs]")) {
			deciding = false;
		} else if (interrupt_edge(msg)) {
			interrupted++;
			deciding = false;
		}
	}
	printf("#   %d failure(s) in the kernel log, %d of them in an interrupt\n", failures,
	       interrupted);
	return interrupted;
}

SCENARIO(hotplug, "hotplug with the cpu page in use allocates nothing in the module")
{
	int fd, kmsg;
	long long made;

	FAULT_SETUP();
	fd = open(CPU_PATH, O_RDONLY);
	REQUIRE(fd >= 0, "open cpu: %s", strerror(errno));
	if (access(CPU1_ONLINE, W_OK)) {
		close(fd);
		SKIP("cpu1 cannot go offline here");
	}
	refs_at_rest();
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	REQUIRE(kmsg >= 0, "open /dev/kmsg: %s", strerror(errno));
	lseek(kmsg, 0, SEEK_END);
	/* Every allocation from the module's code fails, in any task, 1000 times at most. */
	stacks = true;
	setup_attrs(mod_start, mod_end, 100, 1000);
	for (int i = 0; i < 5; i++) {
		CHECK(file_write(CPU1_ONLINE, "0") == 0, "offline: %s", strerror(errno));
		t_sleep_ns(30000000); /* a few refreshes of the page meanwhile */
		CHECK(file_write(CPU1_ONLINE, "1") == 0, "online: %s", strerror(errno));
		t_sleep_ns(30000000);
	}
	made = 2000 - get_attr("failslab", "times") - get_attr("fail_page_alloc", "times");
	stacks = false;
	setup_attrs(0, ~0ul, 0, -1);
	close(fd);
	/* A failure not shown to be an interrupt's (its stack lost from the log) is the module's. */
	made -= interrupts_failed(kmsg);
	close(kmsg);
	CHECK_EQ(made, 0);
	printf("FIGURE fault hotplug cycles 5 module-allocations %lld\n", made);
}

SCENARIO(random_failures, "random failures of module allocations while 6 threads open and map")
{
	pthread_t th[6];

	FAULT_SETUP();
	setup_attrs(mod_start, mod_end, 20, -1);
	for (long i = 0; i < 6; i++)
		pthread_create(&th[i], NULL, random_worker, (void *)(i + 1));
	t_sleep_ns(3000000000ull);
	atomic_store(&stop, 1);
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	setup_attrs(0, ~0ul, 0, -1);
	printf("FIGURE fault random ops %ld enomem %ld other-errors %ld\n", atomic_load(&r_ops),
	       atomic_load(&r_enomem), atomic_load(&r_other));
	CHECK(atomic_load(&r_enomem) > 0, "no failure was injected");
	CHECK_EQ(atomic_load(&r_other), 0);
	CHECK_EQ(t_module_refs_settle(base_refs), base_refs);
}

SCENARIO(no_leaks, "nothing leaked (kmemleak)")
{
	int n;

	if (!fault_injection())
		SKIP(NO_FAULT_INJECTION);
	if (!leaks_checked)
		SKIP("the kernel lacks CONFIG_DEBUG_KMEMLEAK");
	/* Probability 0 here (the kernel's default, and how each scenario leaves it): no failure. */
	n = tk_kmemleak_count();
	CHECK_EQ(n, 0);
}

int main(int argc, char **argv)
{
	int ret;

	(void)argc;
	without_rseq(argv);
	/* Program-wide: kmemleak reports only what leaks while the scenarios run. */
	if (fault_injection()) {
		leaks_checked = tk_kmemleak_present();
		if (leaks_checked)
			tk_kmemleak_forget();
	}
	ret = t_main("t_fault");
	if (fault_injection()) {
		reset_attrs();
		printf("FIGURE fault points %u failed-cleanly %u succeeded %u\n", total.points,
		       total.failed, total.succeeded);
	}
	return ret;
}
