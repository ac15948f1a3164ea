// SPDX-License-Identifier: GPL-2.0
/*
 * t_fuzz: a seeded fuzzer of what an unprivileged process can do to the module's files and
 * mappings. Each round takes a seed and starts PROCS processes (uid nobody) of THREADS threads.
 * Every thread draws its operations from its own generator, seeded from (seed, process, thread):
 * opens with random flags; mmap, munmap, mprotect, mremap, madvise, mlock, msync and mincore with
 * random arguments; touching and writing the mappings; read, write, lseek, ioctl and the other
 * file calls; splice, tee, vmsplice, sendfile and copy_file_range; dup and close in any order;
 * descriptors passed over unix sockets to the next process; fork, vfork, exec (also from a
 * non-leader thread), short-lived threads, signals and SIGKILL of its children; /proc/pid/mem
 * and process_vm_readv; and snapshots of everything it has mapped while all of this happens.
 *
 * What must hold, checked as it goes: a write to a mapping of the module faults, mprotect and
 * /proc/pid/mem never make one writable, /proc/self/maps shows them read-only, shared and not
 * executable; every snapshot of a thread page keeps the sum rule (the buckets add up to
 * tsc - start_tsc) and every cpu page's sum row is the sum of its rows. After each round, with
 * every process gone, the module's reference count is back where it was, and the kernel has
 * logged no report (KASAN, lockdep, UBSAN, WARN, ...). On a report the seed is printed. A
 * process of the fuzzer that dies of a signal is reported and counted in the second FIGURE
 * line, but does not fail the test: the fuzzer damages its own address space at random.
 *
 * A seed fixes each thread's sequence of operations and their arguments, not the interleaving
 * of threads and processes: replaying a seed (-s SEED -R) reruns the same programs, so a race
 * may take a few rounds to come back.
 *
 *	t_fuzz [-s SEED] [-R] [-d SECONDS] [-n ROUNDS] [-p PROCS] [-t THREADS] [-o OPS] [-L]
 *
 * -L leaves out the reference count check after each round, for when other programs use the
 * module meanwhile (t_soak, which checks at its end).
 *
 * Prints "FIGURE fuzz ops N seeds N errors-by-errno E=N,... kernel-reports N".
 */
#include "../tk.h"

#include <dirent.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

/* Newer than some suites' C libraries. */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE 101
#endif

#define NOBODY 65534
#define PAGE 4096ul
#define NFDS 12
#define NMAPS 12
#define NKIDS 8
#define SUB_OPS 24 /* operations of a child, a short-lived thread or an exec'ed program */
#define MAX_ERRNO 140
#define NVTEXT 3
/*
 * The console again, for reports from a failing process: above the numbers the operations pick
 * at random (pick_fd(): 0 to 63) and dup onto (10 to 63), so that they neither write to it nor
 * close it. Their random numbers reach 0, 1 and 2 too: a worker's are /dev/null, or a
 * splice of gigabytes to the 115200-baud console would hold it (and the harness) for minutes.
 */
#define DIAG_FD 100
/*
 * The shared statistics, for the same reason out of the operations' reach: a memfd that exec
 * passes on, so that a program an exec started counts its violations with everyone else's.
 */
#define STATS_FD 101

enum kind { K_OTHER, K_THREAD, K_CPU, K_DIR };

struct stats {
	atomic_ulong ops, errs[MAX_ERRNO], violations, faults, snaps, forks, execs, threads, passed,
		kills;
	/* The first violations' texts, printed again at the end, where a short log keeps them. */
	char vtext[NVTEXT][200]; /* the macro's %.199s */
};

static struct stats *st;
static uint64_t g_deadline; /* CLOCK_MONOTONIC ns at which everything stops */
static int g_sock_send = -1, g_sock_recv = -1; /* to the next process, from the previous */
static const char *g_exe;

struct map {
	char *addr;
	size_t len;
	enum kind kind;
};

struct fz {
	uint64_t rng;
	int depth; /* 0: a worker thread; children, threads and exec'ed programs go deeper */
	int fds[NFDS];
	struct map maps[NMAPS];
	pid_t kids[NKIDS];
};

static __thread sigjmp_buf fault_jmp;
static __thread volatile sig_atomic_t fault_armed;
static __thread const char *cur_op = "none"; /* for the report of an unguarded fault */

#if defined(__x86_64__)
#define FAULT_IP(uc) ((uc)->uc_mcontext.gregs[REG_RIP])
#else
#define FAULT_IP(uc) ((uc)->uc_mcontext.pc)
#endif

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	if (fault_armed) {
		fault_armed = 0;
		siglongjmp(fault_jmp, sig);
	}
	/* A fault outside a guarded access: the fuzzer's bug or the library's. Say where, crash. */
	dprintf(DIAG_FD, "# fuzz: unguarded signal %d at %p (code %d) in %s, ip %#llx\n", sig,
		si->si_addr, si->si_code, cur_op, (unsigned long long)FAULT_IP((ucontext_t *)uc));
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A stack for the fault handler, so that it reports even a fault of an exhausted stack. */
static void alt_stack(void)
{
	static __thread char mem[65536];
	stack_t ss = { .ss_sp = mem, .ss_size = sizeof(mem) };

	sigaltstack(&ss, NULL);
}

static void on_usr1(int sig)
{
	(void)sig; /* only interrupts a system call */
}

/* A broken promise of the module: count it, and say it with write(2), safe in any child. */
#define violation(...)                                                                     \
	do {                                                                               \
		char vbuf_[640];                                                           \
		unsigned long vi_;                                                         \
                                                                                           \
		snprintf(vbuf_, sizeof(vbuf_), __VA_ARGS__);                               \
		vi_ = atomic_fetch_add(&st->violations, 1);                                \
		if (vi_ < NVTEXT)                                                          \
			snprintf(st->vtext[vi_], sizeof(st->vtext[vi_]), "%.199s", vbuf_); \
		dprintf(DIAG_FD, "# VIOLATION: %s\n", vbuf_);                              \
	} while (0)

/* Count a system call's outcome: its errno when it failed. Returns r. */
static long note(long r)
{
	int e = errno;

	if (r == -1 && e > 0 && e < MAX_ERRNO)
		atomic_fetch_add(&st->errs[e], 1);
	errno = e;
	return r;
}

/*
 * The last memory operations of this process's threads, to print with a violation that
 * /proc/self/maps shows: the operation that made the mapping may have been another thread's.
 */
#define NHIST 64
static char hist_ring[NHIST][112];
static atomic_uint hist_n;

/* A macro, not a variadic function: clang's analyzer took the va_list there for uninitialized. */
#define hist(...)                                                                              \
	do {                                                                                   \
		unsigned int i_ = atomic_fetch_add(&hist_n, 1) % NHIST;                        \
		int w_ = snprintf(hist_ring[i_], sizeof(hist_ring[i_]), "%d ", gettid());      \
                                                                                               \
		snprintf(hist_ring[i_] + w_, sizeof(hist_ring[i_]) - (size_t)w_, __VA_ARGS__); \
	} while (0)

static void hist_dump(void)
{
	unsigned int n = atomic_load(&hist_n);

	for (unsigned int i = n > NHIST ? n - NHIST : 0; i < n; i++)
		dprintf(DIAG_FD, "#   op %u (tid): %s\n", i, hist_ring[i % NHIST]);
}

static void *note_map(void *p)
{
	if (p == MAP_FAILED)
		note(-1);
	return p;
}

static bool expired(void)
{
	return mono_ns() >= g_deadline;
}

/* ---- Descriptors and mappings of this thread ---- */

static enum kind fd_kind(int fd)
{
	struct statfs sfs;
	struct stat s;

	if (fstatfs(fd, &sfs) || sfs.f_type != CSF_SUPER_MAGIC || fstat(fd, &s))
		return K_OTHER;
	if (S_ISDIR(s.st_mode))
		return K_DIR;
	return s.st_ino == 2 ? K_THREAD : s.st_ino == 3 ? K_CPU : K_OTHER;
}

static int pick_fd(struct fz *f)
{
	int i = (int)tk_below(&f->rng, NFDS + 2);

	if (i >= NFDS) /* now and then a descriptor that is not ours, or none */
		return i == NFDS ? -1 : (int)tk_below(&f->rng, 64);
	return f->fds[i];
}

static void add_fd(struct fz *f, int fd)
{
	int i = (int)tk_below(&f->rng, NFDS);

	if (fd < 0)
		return;
	if (f->fds[i] >= 0)
		close(f->fds[i]);
	f->fds[i] = fd;
}

static struct map *pick_map(struct fz *f)
{
	struct map *m = &f->maps[tk_below(&f->rng, NMAPS)];

	return m->addr ? m : NULL;
}

static void add_map(struct fz *f, char *addr, size_t len, enum kind kind)
{
	struct map *m = NULL;

	for (int i = 0; i < NMAPS && !m; i++)
		if (!f->maps[i].addr)
			m = &f->maps[i];
	if (!m) { /* full: forget one; it stays mapped until the process exits */
		m = &f->maps[tk_below(&f->rng, NMAPS)];
	}
	m->addr = addr;
	m->len = (len + PAGE - 1) & ~(PAGE - 1); /* what the kernel mapped */
	m->kind = kind;
}

/*
 * Whether addr lies in a mapping of one of the module's files, as /proc/self/maps says: a
 * violation is reported only when this confirms it. A table's kind is the descriptor's, taken
 * by fstat() after mmap(), and siblings close and reopen numbers in between.
 */
static bool module_mapping_at(const void *addr)
{
	char line[512];
	bool ours = false;
	FILE *fp = fopen("/proc/self/maps", "re");

	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (unsigned long)addr >= lo &&
		    (unsigned long)addr < hi) {
			ours = strstr(line, CSF_MOUNT_POINT) != NULL;
			break;
		}
	}
	fclose(fp);
	return ours;
}

/* Unmap [off, off + len) of m and keep the table true to what is left. */
static void unmap_part(struct fz *f, struct map *m, size_t off, size_t len)
{
	(void)f;
	if (off >= m->len)
		return;
	if (len > m->len - off)
		len = m->len - off;
	hist("munmap(%p, %#zx)", m->addr + off, len);
	if (note(munmap(m->addr + off, len)))
		return;
	if (off == 0 && len == m->len)
		m->addr = NULL;
	else if (off == 0)
		m->addr += len, m->len -= len;
	else
		m->len = off; /* a middle hole: the tail stays mapped, untracked */
}

/*
 * In a child just after fork(): forget what fork() did not copy. A thread page (VM_DONTCOPY)
 * and whatever MADV_DONTFORK marked leave holes, where the child's next mmap() (its library
 * mapping its own thread page, most likely, into the hole of the parent's) can land; a table
 * entry still naming the hole would later unmap that. The child has one thread here, so the
 * table and /proc/self/maps cannot change under each other.
 */
static void prune_after_fork(struct fz *f)
{
	unsigned long lo[256], hi[256];
	char line[512];
	int n = 0;
	FILE *fp = fopen("/proc/self/maps", "re");

	while (fp && n < 256 && fgets(line, sizeof(line), fp))
		if (sscanf(line, "%lx-%lx", &lo[n], &hi[n]) == 2)
			n++;
	if (fp)
		fclose(fp);
	for (int i = 0; i < NMAPS; i++) {
		unsigned long a = (unsigned long)f->maps[i].addr, end = a + f->maps[i].len;

		if (!a)
			continue;
		/* Covered from a to end by consecutive ranges of the sorted list? */
		for (int j = 0; j < n && a < end; j++)
			if (lo[j] <= a && a < hi[j])
				a = hi[j];
		if (a < end || n == 256)
			f->maps[i].addr =
				NULL; /* the mapping is not whole here: not ours to touch */
	}
}

/* ---- Checks of what is mapped ---- */

/* Read every page of m (or write one byte to each); the signal that stopped it, or 0. */
static int touch(struct map *m, bool write)
{
	volatile unsigned char sink = 0;
	int sig;

	fault_armed = 1;
	sig = sigsetjmp(fault_jmp, 1);
	if (sig == 0) {
		for (size_t off = 0; off < m->len; off += PAGE) {
			if (write)
				((volatile unsigned char *)m->addr)[off] = 1;
			else
				sink += ((volatile unsigned char *)m->addr)[off];
		}
	}
	fault_armed = 0;
	(void)sink;
	if (sig)
		atomic_fetch_add(&st->faults, 1);
	return sig;
}

/*
 * The checks of a page say what is wrong in why (n bytes) and leave the verdict to check_map():
 * they run with a fault handler armed, under which nothing but loads of the page belongs.
 */
static void check_thread_page(const struct csf_thread_page *p, char *why, size_t n)
{
	struct csf_snap s;
	uint64_t sum = 0;

	if (p->hdr.magic != CSF_MAGIC || p->hdr.kind != CSF_KIND_THREAD) {
		snprintf(why, n, "mapped thread page: bad header (magic %#x kind %u)", p->hdr.magic,
			 p->hdr.kind);
		return;
	}
	csf_page_snap(p, &s);
	for (int i = 0; i < CSF_NR_STATES; i++)
		sum += s.p.cyc[i];
	atomic_fetch_add(&st->snaps, 1);
	if (sum != s.tsc - s.p.start_tsc)
		snprintf(why, n,
			 "mapped thread page: buckets add up to %llu, tsc - start_tsc is %llu",
			 (unsigned long long)sum, (unsigned long long)(s.tsc - s.p.start_tsc));
}

static void check_cpu_page(const struct csf_cpu_page *p, size_t maplen, char *why, size_t len)
{
	struct csf_cpu_row rows[1 + 64];
	uint32_t seq, n;

	if (p->hdr.magic != CSF_MAGIC || p->hdr.kind != CSF_KIND_CPU) {
		snprintf(why, len, "cpu page: bad header (magic %#x kind %u)", p->hdr.magic,
			 p->hdr.kind);
		return;
	}
	n = p->nr_rows;
	if (n < 2 || n > 65 || p->row_size != sizeof(struct csf_cpu_row) ||
	    offsetof(struct csf_cpu_page, rows) + n * sizeof(rows[0]) > maplen)
		return; /* a partly unmapped page, or more CPUs than this check keeps */
	do {
		while ((seq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE)) & 1)
			;
		memcpy(rows, (const void *)p->rows, n * sizeof(rows[0]));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&p->seq, __ATOMIC_RELAXED) != seq);
	atomic_fetch_add(&st->snaps, 1);
	if (!tk_cpu_sum_ok(rows, (int)n))
		snprintf(why, len, "cpu page: the sum row is not the sum of the rows");
}

/* Snapshot a mapping of ours, guarded: it may be gone (SIGBUS after MADV_DONTNEED). */
static void check_map(struct map *m)
{
	char why[200] = "";
	int sig;

	if (m->kind != K_THREAD && m->kind != K_CPU)
		return;
	fault_armed = 1;
	sig = sigsetjmp(fault_jmp, 1);
	if (sig == 0) {
		const struct csf_hdr *h = (const void *)m->addr;
		enum kind k = m->kind;

		/*
		 * The table's kind comes from fstat() of the descriptor after mmap(), and a sibling
		 * can close that number and open the other file on it in between: with a valid
		 * header, the page itself says which it is.
		 */
		if (h->magic == CSF_MAGIC && h->kind == CSF_KIND_CPU)
			k = K_CPU;
		else if (h->magic == CSF_MAGIC && h->kind == CSF_KIND_THREAD)
			k = K_THREAD;
		if (k == K_THREAD)
			check_thread_page((const void *)m->addr, why, sizeof(why));
		else
			check_cpu_page((const void *)m->addr, m->len, why, sizeof(why));
	}
	fault_armed = 0;
	/*
	 * Or the number was opened on a file of the fuzzer's own (a /tmp file reopened through
	 * /proc/self/fd), which mmap() took, and the table says K_THREAD of its bytes: a failed
	 * check is a violation only where /proc/self/maps names the module's file at the address.
	 */
	if (sig == 0 && why[0] && module_mapping_at(m->addr))
		violation("%s", why);
	if (sig)
		atomic_fetch_add(&st->faults, 1);
}

/* Every mapping of the module's files must be read-only, shared and not executable. */
static void check_maps_file(void)
{
	bool bad = false;
	char line[512];
	FILE *fp = fopen("/proc/self/maps", "re");

	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char perms[8] = "";
		unsigned long lo, hi;

		/* Only whole lines: one read can end mid-line while others change the mappings. */
		if (!strstr(line, CSF_MOUNT_POINT) ||
		    sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || strlen(perms) != 4)
			continue;
		if (perms[1] == 'w' || perms[2] == 'x' || perms[3] != 's') {
			violation("/proc/self/maps: %s", line);
			bad = true;
		}
	}
	if (bad) {
		/* All of it, and what the threads did last, to find the cause. */
		rewind(fp);
		while (fgets(line, sizeof(line), fp))
			dprintf(DIAG_FD, "#   maps: %s", line);
		hist_dump();
	}
	fclose(fp);
}

static void lib_snaps(struct fz *f)
{
	struct csf_snap s;
	struct csf_cpu_snap c;
	struct csf_cpu_row rows[8];
	uint64_t cyc;

	if (note(csf_thread_snap(&s)) == 0) {
		uint64_t sum = 0;

		for (int i = 0; i < CSF_NR_STATES; i++)
			sum += s.p.cyc[i];
		atomic_fetch_add(&st->snaps, 1);
		if (sum != s.tsc - s.p.start_tsc)
			violation("csf_thread_snap: buckets %llu, wall %llu",
				  (unsigned long long)sum,
				  (unsigned long long)(s.tsc - s.p.start_tsc));
		if (s.p.tid != (uint32_t)gettid() && !f->depth)
			violation("csf_thread_snap: tid %u, not mine (%d)", s.p.tid, gettid());
	}
	note(csf_thread_cyc((unsigned int)tk_below(&f->rng, CSF_NR_STATES + 2), &cyc));
	if (note(csf_cpu_snap(&c, (int)tk_below(&f->rng, 5) - 2)) == 0)
		atomic_fetch_add(&st->snaps, 1);
	/* Not csf_cpu_unmap(): the library forbids it while other threads may read the page. */
	note(csf_cpu_snap_all(rows, (int)tk_below(&f->rng, 10) - 1, NULL));
}

/* ---- The operations ---- */

static const int open_flags[] = { O_CREAT,   O_EXCL,	O_TRUNC,   O_APPEND,   O_NONBLOCK,
				  O_DIRECT,  O_CLOEXEC, O_PATH,	   O_NOFOLLOW, O_DIRECTORY,
				  O_NOATIME, O_SYNC,	O_TMPFILE, O_NOCTTY,   O_ASYNC };

static int rand_open_flags(struct fz *f)
{
	int flags = (int)tk_below(&f->rng, 4); /* O_RDONLY, O_WRONLY, O_RDWR, 3 */

	if (tk_below(&f->rng, 2))
		for (int i = (int)tk_below(&f->rng, 4); i > 0; i--)
			flags |= open_flags[tk_below(&f->rng, ARRAY_SIZE(open_flags))];
	return flags;
}

static void op_open(struct fz *f)
{
	static const char *const names[] = { CSF_THREAD_FILE, CSF_CPU_FILE, ".", "..", "nope" };
	char path[64];
	int fd, r = (int)tk_below(&f->rng, 10);

	if (r < 4)
		fd = open(CSF_MOUNT_POINT "/" CSF_THREAD_FILE, rand_open_flags(f), 0644);
	else if (r < 6)
		fd = open(CSF_MOUNT_POINT "/" CSF_CPU_FILE, rand_open_flags(f), 0644);
	else if (r < 7)
		fd = open(CSF_MOUNT_POINT,
			  rand_open_flags(f) | (tk_below(&f->rng, 2) ? O_DIRECTORY : 0));
	else if (r < 8) /* relative to a descriptor, perhaps the directory */
		fd = openat(pick_fd(f), names[tk_below(&f->rng, 5)], rand_open_flags(f), 0644);
	else { /* reopen through /proc: a way around the flags the first open was given */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", pick_fd(f));
		/* O_NONBLOCK: the number may be a pipe's by now, whose open waits for a peer */
		fd = open(path, rand_open_flags(f) | O_NONBLOCK, 0644);
	}
	add_fd(f, (int)note(fd));
}

static size_t rand_len(struct fz *f)
{
	switch (tk_below(&f->rng, 8)) {
	case 0:
		return 0;
	case 1:
		return 1 + tk_below(&f->rng, PAGE);
	case 2:
		return (size_t)1 << (20 + tk_below(&f->rng, 24));
	case 3:
		return (1 + tk_below(&f->rng, 16)) * PAGE;
	default:
		return (1 + tk_below(&f->rng, 2)) * PAGE;
	}
}

static void op_mmap(struct fz *f)
{
	static const int extra[] = {
		MAP_POPULATE,  MAP_LOCKED, MAP_NORESERVE, MAP_NONBLOCK,
		MAP_GROWSDOWN, MAP_STACK,  MAP_HUGETLB,
#ifdef MAP_32BIT
		MAP_32BIT, /* x86-64 only */
#endif
	};
	static const int base[] = { MAP_SHARED,
				    MAP_SHARED,
				    MAP_SHARED,
				    MAP_PRIVATE,
				    MAP_SHARED_VALIDATE,
				    MAP_SHARED_VALIDATE | MAP_SYNC,
				    0 };
	int fd = pick_fd(f), prot = PROT_READ, flags = base[tk_below(&f->rng, 7)];
	size_t len = tk_below(&f->rng, 4) ? PAGE : rand_len(f);
	off_t off = tk_below(&f->rng, 6) ? 0 : (off_t)(tk_below(&f->rng, 4) * PAGE);
	char *addr = NULL, *p;

	if (tk_below(&f->rng, 3) == 0)
		prot = (int)tk_below(&f->rng, 8); /* any of read, write, exec */
	if (tk_below(&f->rng, 4) == 0)
		flags |= extra[tk_below(&f->rng, ARRAY_SIZE(extra))];
	if (tk_below(&f->rng, 16) == 0)
		off = -(off_t)PAGE;
	if (tk_below(&f->rng, 5) == 0) {
		/*
		 * MAP_FIXED, onto a scratch area made for it: a failed one can unmap its target
		 * first, and a table entry there could later hit another thread's mapping (the
		 * library's page, a thread stack) placed in that hole. So the table keeps only
		 * mappings the kernel placed, and the scratch area goes, in one munmap().
		 */
		size_t slen = 4 * PAGE, rlen;
		char *scratch = mmap(NULL, slen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (scratch == MAP_FAILED)
			return;
		if (len == 0 || len > slen)
			len = PAGE * (1 + tk_below(&f->rng, 3));
		rlen = (len + PAGE - 1) & ~(PAGE - 1);
		addr = scratch + PAGE * tk_below(&f->rng, (slen - rlen) / PAGE + 1);
		flags |= tk_below(&f->rng, 2) ? MAP_FIXED : MAP_FIXED_NOREPLACE;
		p = note_map(mmap(addr, len, prot, flags, fd, off));
		hist("mmap(%p, %#zx, %#x, %#x, fd %d, %lld) = %p (scratch %p)", addr, len, prot,
		     flags, fd, (long long)off, p, scratch);
		if (p != MAP_FAILED) {
			struct map tmp = { p, rlen, fd_kind(fd) };

			if ((tmp.kind == K_THREAD || tmp.kind == K_CPU) &&
			    (prot & (PROT_WRITE | PROT_EXEC)) && module_mapping_at(p))
				violation("mmap of a module descriptor with prot %#x succeeded",
					  prot);
			if (touch(&tmp, false) == 0)
				check_map(&tmp);
			munmap(scratch, slen);
		} else {
			munmap(scratch, (size_t)(addr - scratch));
			munmap(addr + rlen, (size_t)(scratch + slen - (addr + rlen)));
		}
		return;
	}
	p = note_map(mmap(NULL, len, prot, flags, fd, off));
	hist("mmap(NULL, %#zx, %#x, %#x, fd %d, %lld) = %p", len, prot, flags, fd, (long long)off,
	     p);
	if (p == MAP_FAILED)
		return;
	{
		enum kind k = fd_kind(fd);

		/* k is the descriptor's kind after mmap(): the mapping's own name confirms it */
		if ((k == K_THREAD || k == K_CPU) && (prot & (PROT_WRITE | PROT_EXEC)) &&
		    module_mapping_at(p))
			violation("mmap of a %s descriptor with prot %#x succeeded",
				  k == K_THREAD ? "thread-self" : "cpu", prot);
		add_map(f, p, len, k);
	}
}

static void op_munmap(struct fz *f)
{
	struct map *m = pick_map(f);

	if (!m)
		return;
	if (tk_below(&f->rng, 3) == 0 && m->len > PAGE)
		unmap_part(f, m, PAGE * tk_below(&f->rng, m->len / PAGE), PAGE);
	else
		unmap_part(f, m, 0, m->len);
}

static void op_mprotect(struct fz *f)
{
	struct map *m = pick_map(f);
	int prot = (int)tk_below(&f->rng, 8);

	if (!m)
		return;
	if (tk_below(&f->rng, 8) == 0)
		prot |= PROT_GROWSDOWN;
	hist("mprotect(%p, %#zx, %#x)", m->addr, m->len, prot);
	if (note(mprotect(m->addr, m->len, prot)) == 0 && (prot & (PROT_WRITE | PROT_EXEC)) &&
	    (m->kind == K_THREAD || m->kind == K_CPU) && module_mapping_at(m->addr))
		violation("mprotect(%#x) of a module mapping succeeded", prot);
}

/*
 * mremap() on a mapping of its own, made for the purpose where the kernel chooses: a move or a
 * shrink unmaps part of the source, and a hole in the reservation could be filled by another
 * thread's mmap() before a refill. Whatever results is checked and unmapped.
 */
static void op_mremap(struct fz *f)
{
	int fd = pick_fd(f), flags = 0;
	size_t olen = PAGE, nlen;
	char *src, *dst = NULL, *p;
	enum kind k = fd_kind(fd);

	src = mmap(NULL, olen, PROT_READ, MAP_SHARED, fd, 0);
	if (src == MAP_FAILED)
		return;
	switch (tk_below(&f->rng, 4)) {
	case 0:
		nlen = olen;
		break;
	case 1:
		nlen = olen + PAGE * (1 + tk_below(&f->rng, 2));
		break;
	case 2:
		nlen = 1 + tk_below(&f->rng, PAGE - 1); /* within the page: no change */
		break;
	default:
		nlen = rand_len(f);
	}
	switch (tk_below(&f->rng, 4)) {
	case 0:
		break;
	case 1:
		flags = MREMAP_MAYMOVE;
		break;
	case 2: /* onto a scratch area of its own */
		dst = mmap(NULL, 4 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (dst == MAP_FAILED)
			dst = NULL;
		else
			flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		if (nlen > 4 * PAGE)
			nlen = 4 * PAGE;
		break;
	default:
		flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP;
		nlen = olen;
	}
	p = note_map(mremap(src, olen, nlen, flags, dst));
	hist("mremap(%p, %#zx, %#zx, %#x, %p) = %p", src, olen, nlen, flags, dst, p);
	if (p != MAP_FAILED) {
		struct map tmp = { p, (nlen + PAGE - 1) & ~(PAGE - 1), k };

		if (tmp.len > olen && (k == K_THREAD || k == K_CPU) && module_mapping_at(p))
			violation("mremap grew a module mapping from %zu to %zu", olen, tmp.len);
		if (touch(&tmp, false) == 0)
			check_map(&tmp);
		/* Only what is ours, and a range that has a hole in it never in two calls. */
		if (dst && p == dst)
			munmap(dst, 4 * PAGE); /* the moved mapping and the rest of the scratch */
		else
			munmap(p, tmp.len);
		if (flags & MREMAP_DONTUNMAP)
			munmap(src, olen); /* the old range stays, empty */
	} else {
		munmap(src, olen);
	}
	if (dst && p != dst) {
		/* A failed MREMAP_FIXED may have unmapped its target: that part is not ours. */
		size_t gone = p == MAP_FAILED ? (nlen + PAGE - 1) & ~(PAGE - 1) : 0;

		munmap(dst + gone, 4 * PAGE - gone);
	}
}

static void op_madvise(struct fz *f)
{
	static const int advice[] = { MADV_NORMAL,
				      MADV_RANDOM,
				      MADV_SEQUENTIAL,
				      MADV_WILLNEED,
				      MADV_DONTNEED,
				      MADV_FREE,
				      MADV_REMOVE,
				      MADV_DONTFORK,
				      MADV_DOFORK,
				      MADV_MERGEABLE,
				      MADV_UNMERGEABLE,
				      MADV_HUGEPAGE,
				      MADV_NOHUGEPAGE,
				      MADV_DONTDUMP,
				      MADV_DODUMP,
				      MADV_WIPEONFORK,
				      MADV_KEEPONFORK,
				      MADV_COLD,
				      MADV_PAGEOUT,
				      MADV_POPULATE_READ,
				      MADV_POPULATE_WRITE,
				      MADV_COLLAPSE,
				      MADV_HWPOISON,
				      MADV_SOFT_OFFLINE,
				      12345 };
	struct map *m = pick_map(f);
	int a = advice[tk_below(&f->rng, ARRAY_SIZE(advice))];

	if (!m)
		return;
	hist("madvise(%p, %#zx, %d)", m->addr, m->len, a);
	if (note(madvise(m->addr, m->len, a)) == 0 && a == MADV_DOFORK && m->kind == K_THREAD &&
	    module_mapping_at(m->addr))
		violation("MADV_DOFORK on a thread page succeeded");
}

static void op_mlock_msync(struct fz *f)
{
	struct map *m = pick_map(f);
	unsigned char vec[64];

	if (!m)
		return;
	switch (tk_below(&f->rng, 5)) {
	case 0:
		note(mlock(m->addr, m->len));
		break;
	case 1:
		note(munlock(m->addr, m->len));
		break;
	case 2:
		note(syscall(SYS_mlock2, m->addr, m->len, 1 /* MLOCK_ONFAULT */));
		break;
	case 3:
		note(msync(m->addr, m->len, (int)tk_below(&f->rng, 8)));
		break;
	default:
		if (m->len <= sizeof(vec) * PAGE)
			note(mincore(m->addr, m->len, vec));
	}
}

static void op_touch(struct fz *f)
{
	struct map *m = pick_map(f);

	if (!m)
		return;
	if (tk_below(&f->rng, 3)) {
		if (touch(m, false) == 0)
			check_map(m);
		return;
	}
	/* Writing must fault: the mapping is read-only and can never become writable. */
	if (touch(m, true) == 0 && (m->kind == K_THREAD || m->kind == K_CPU) &&
	    module_mapping_at(m->addr))
		violation("a write to a module mapping went through");
}

static void op_procmem(struct fz *f)
{
	struct map *m = pick_map(f);
	char buf[256];
	struct iovec local = { buf, sizeof(buf) }, remote;
	int fd;

	if (!m) {
		check_maps_file();
		return;
	}
	remote.iov_base = m->addr;
	remote.iov_len = sizeof(buf);
	switch (tk_below(&f->rng, 4)) {
	case 0:
		note(process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
		break;
	case 1:
		if (note(process_vm_writev(getpid(), &local, 1, &remote, 1, 0)) > 0 &&
		    (m->kind == K_THREAD || m->kind == K_CPU) && module_mapping_at(m->addr))
			violation("process_vm_writev wrote to a module mapping");
		break;
	default:
		fd = (int)note(open("/proc/self/mem", O_RDWR | O_CLOEXEC));
		if (fd < 0)
			break;
		note(pread(fd, buf, sizeof(buf), (off_t)(uintptr_t)m->addr));
		memset(buf, 0x5a, sizeof(buf));
		if (note(pwrite(fd, buf, 8, (off_t)(uintptr_t)m->addr)) > 0 &&
		    (m->kind == K_THREAD || m->kind == K_CPU) && module_mapping_at(m->addr))
			violation("a /proc/self/mem write to a module mapping went through");
		close(fd);
		check_maps_file();
	}
}

static void op_rw(struct fz *f)
{
	char buf[512] = "";
	struct iovec iov[2] = { { buf, 100 }, { buf + 100, 300 } };
	int fd = pick_fd(f);
	size_t len = tk_below(&f->rng, sizeof(buf) + 1);
	off_t off = (off_t)tk_below(&f->rng, 3 * PAGE) - (off_t)PAGE;

	switch (tk_below(&f->rng, 8)) {
	case 0:
		note(read(fd, buf, len));
		break;
	case 1:
		note(pread(fd, buf, len, off));
		break;
	case 2:
		note(readv(fd, iov, 2));
		break;
	case 3:
		note(write(fd, buf, len));
		break;
	case 4:
		note(pwrite(fd, buf, len, off));
		break;
	case 5:
		note(writev(fd, iov, 2));
		break;
	case 6:
		note(lseek(fd, off, (int)tk_below(&f->rng, 6))); /* SEEK_SET .. SEEK_HOLE, bad */
		break;
	default:
		note(syscall(SYS_preadv2, fd, iov, 2, off, (int)tk_below(&f->rng, 32)));
	}
}

static void op_ioctl(struct fz *f)
{
	static const unsigned long cmds[] = {
		FIONREAD,      FIONBIO, FIOCLEX,	   FIONCLEX,	    FIOASYNC,
		FIGETBSZ,      FIBMAP,	FS_IOC_GETFLAGS,   FS_IOC_SETFLAGS, FS_IOC_GETVERSION,
		FS_IOC_FIEMAP, FICLONE, FS_IOC_FSGETXATTR, TCGETS,	    0x5401
	};
	union {
		long l;
		char b[256];
	} arg = { 0 };
	unsigned long cmd = tk_below(&f->rng, 4) ? cmds[tk_below(&f->rng, 15)] :
						   (unsigned long)tk_rand(&f->rng);

	note(ioctl(pick_fd(f), cmd, &arg));
}

static void op_fileops(struct fz *f)
{
	struct stat s;
	struct statfs sfs;
	char buf[512];
	struct timespec ts[2] = { { 0, 0 }, { 0, UTIME_NOW } };
	int fd = pick_fd(f);

	switch (tk_below(&f->rng, 20)) {
	case 0:
		note(fstat(fd, &s));
		break;
	case 1:
		note(fstatfs(fd, &sfs));
		break;
	case 2:
		note(fchmod(fd, 0777));
		break;
	case 3:
		note(fchown(fd, NOBODY, NOBODY));
		break;
	case 4:
		note(ftruncate(fd, (off_t)tk_below(&f->rng, 3 * PAGE)));
		break;
	case 5:
		note(fallocate(fd, (int)tk_below(&f->rng, 4), 0, PAGE));
		break;
	case 6:
		note(tk_below(&f->rng, 2) ? fsync(fd) : fdatasync(fd));
		break;
	case 7: /* never a lock that waits: nothing here may block for good */
		note(flock(fd, (int)(1 << tk_below(&f->rng, 4)) | LOCK_NB));
		break;
	case 8: {
		struct flock fl = { .l_type = (short)tk_below(&f->rng, 3), .l_len = 1 };

		note(fcntl(fd, tk_below(&f->rng, 2) ? F_SETLK : F_GETLK, &fl));
		break;
	}
	case 9:
		note(fcntl(fd, F_SETFL,
			   (int)tk_below(&f->rng, 2) ? O_APPEND | O_NONBLOCK : O_DIRECT));
		break;
	case 10:
		note(fcntl(fd, F_SETLEASE, F_RDLCK));
		break;
	case 11:
		note(posix_fadvise(fd, 0, PAGE, (int)tk_below(&f->rng, 6)) ? -1 : 0);
		break;
	case 12:
		note(readahead(fd, 0, PAGE));
		break;
	case 13:
		note(syscall(SYS_getdents64, fd, buf, sizeof(buf)));
		break;
	case 14:
		note(fgetxattr(fd, "user.x", buf, sizeof(buf)));
		break;
	case 15:
		note(fsetxattr(fd, "user.x", "1", 1, 0));
		break;
	case 16:
		note(flistxattr(fd, buf, sizeof(buf)));
		break;
	case 17:
		note(futimens(fd, ts));
		break;
	case 18:
		note(sync_file_range(fd, 0, PAGE, (unsigned int)tk_below(&f->rng, 8)));
		break;
	default:
		note(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	}
}

static void op_splice(struct fz *f)
{
	int p[2], fd = pick_fd(f);
	off_t off = (off_t)tk_below(&f->rng, 2 * PAGE);
	struct map *m = pick_map(f);
	char tmpl[] = "/tmp/csf-fuzz-XXXXXX";
	int tmp;

	if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
		return;
	switch (tk_below(&f->rng, 6)) {
	case 0:
		note(splice(fd, tk_below(&f->rng, 2) ? &off : NULL, p[1], NULL, PAGE,
			    SPLICE_F_NONBLOCK));
		break;
	case 1:
		note(sendfile(p[1], fd, tk_below(&f->rng, 2) ? &off : NULL, PAGE));
		break;
	case 2:
		tmp = mkostemp(tmpl, O_CLOEXEC);
		if (tmp >= 0) {
			unlink(tmpl);
			note(copy_file_range(fd, NULL, tmp, NULL, PAGE, 0));
			close(tmp);
		}
		break;
	case 3:
		if (m) { /* the mapping's memory into a pipe, and through it */
			struct iovec iov = { m->addr, m->len < PAGE ? m->len : PAGE };
			char buf[PAGE];

			if (note(vmsplice(p[1], &iov, 1, SPLICE_F_NONBLOCK)) > 0)
				note(read(p[0], buf, sizeof(buf)));
		}
		break;
	case 4: {
		int q[2];

		if (note(splice(fd, NULL, p[1], NULL, 64, SPLICE_F_NONBLOCK)) > 0 &&
		    !pipe2(q, O_CLOEXEC)) {
			note(tee(p[0], q[1], 64, SPLICE_F_NONBLOCK));
			close(q[0]);
			close(q[1]);
		}
		break;
	}
	default:
		note(splice(p[0], NULL, fd, tk_below(&f->rng, 2) ? &off : NULL, PAGE,
			    SPLICE_F_NONBLOCK));
	}
	close(p[0]);
	close(p[1]);
}

static void op_dup_close(struct fz *f)
{
	int i = (int)tk_below(&f->rng, NFDS);

	switch (tk_below(&f->rng, 5)) {
	case 0:
		add_fd(f, (int)note(dup(pick_fd(f))));
		break;
	case 1: /* onto a random number: whatever was there closes, ours or not */
		add_fd(f, (int)note(dup3(pick_fd(f), 10 + (int)tk_below(&f->rng, 54),
					 tk_below(&f->rng, 2) ? O_CLOEXEC : 0)));
		break;
	case 2:
		add_fd(f, (int)note(fcntl(pick_fd(f), F_DUPFD_CLOEXEC, 10)));
		break;
	case 3:
		note(close(10 + (int)tk_below(&f->rng, 54))); /* any order, anyone's */
		break;
	default:
		if (f->fds[i] >= 0) {
			note(close(f->fds[i]));
			f->fds[i] = -1;
		}
	}
}

static void op_pass(struct fz *f)
{
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	char c = 'x';
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf };
	struct cmsghdr *cm;
	int n = 1 + (int)tk_below(&f->rng, 3);

	memset(&u, 0, sizeof(u));
	if (tk_below(&f->rng, 2)) {
		msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n * sizeof(int));
		for (int i = 0; i < n; i++)
			((int *)CMSG_DATA(cm))[i] = f->fds[tk_below(&f->rng, NFDS)];
		if (note(sendmsg(g_sock_send, &msg, MSG_DONTWAIT | MSG_NOSIGNAL)) > 0)
			atomic_fetch_add(&st->passed, (unsigned long)n);
		return;
	}
	msg.msg_controllen = sizeof(u.buf);
	if (note(recvmsg(g_sock_recv, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0)
		return;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
			add_fd(f, ((int *)CMSG_DATA(cm))[i]);
	}
}

static void run_ops(struct fz *f, int n);

static void add_kid(struct fz *f, pid_t pid)
{
	int i = (int)tk_below(&f->rng, NKIDS);

	if (f->kids[i] > 0) { /* reap the old one first, whatever it is doing: kill it */
		kill(f->kids[i], SIGKILL);
		waitpid(f->kids[i], NULL, 0);
	}
	f->kids[i] = pid;
}

static void exec_self(uint64_t seed)
{
	char s[32];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)seed);
	execl(g_exe, g_exe, "exec-child", s, (char *)NULL);
}

/* A thread of a forked child that execs from a non-leader thread (the kernel's de_thread). */
static void *exec_thread(void *arg)
{
	struct fz *f = arg;

	run_ops(f, 4);
	exec_self(f->rng);
	_exit(3);
}

static void *sub_thread(void *arg)
{
	struct fz *f = arg;

	alt_stack();
	run_ops(f, SUB_OPS);
	for (int i = 0; i < NFDS; i++)
		if (f->fds[i] >= 0 && tk_below(&f->rng, 2))
			close(f->fds[i]); /* the rest stay open: the process's, closed at exit */
	free(f);
	return NULL;
}

/* A thread's own state: the descriptors and a new generator, no mappings. */
static struct fz *derive(struct fz *f)
{
	struct fz *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *f;
	c->rng = tk_rand(&f->rng);
	c->depth = f->depth + 1;
	memset(c->kids, 0, sizeof(c->kids));
	/* The mappings stay the parent thread's: two tables of one mapping would unmap it twice. */
	memset(c->maps, 0, sizeof(c->maps));
	return c;
}

static void op_spawn(struct fz *f)
{
	pid_t pid;
	struct fz *c;
	pthread_t th;

	if (f->depth >= 2 || expired())
		return;
	switch (tk_below(&f->rng, 6)) {
	case 0: /* fork: the child has copies of the descriptors, not of the thread mappings */
	case 1:
		pid = (pid_t)note(fork());
		if (pid == 0) {
			prune_after_fork(f);
			f->depth++;
			f->rng = tk_rand(&f->rng) ^ 0x5eed;
			run_ops(f, SUB_OPS);
			_exit(0);
		}
		if (pid > 0) {
			atomic_fetch_add(&st->forks, 1);
			add_kid(f, pid);
		}
		break;
	case 2: { /* vfork, then exec or exit: descriptors without O_CLOEXEC go along */
		/*
		 * The child runs on this thread's stack until it execs: everything it needs is
		 * ready beforehand, and it calls nothing but execv() and _exit(), or it could
		 * overwrite what this frame holds (f among it) and send the parent astray.
		 */
		char seed[32];
		char *argv[] = { (char *)g_exe, "exec-child", seed, NULL };
		bool do_exec = tk_below(&f->rng, 2);

		snprintf(seed, sizeof(seed), "%llu", (unsigned long long)tk_rand(&f->rng));
		pid = vfork();
		if (pid == 0) {
			if (do_exec)
				execv(g_exe, argv);
			_exit(0);
		}
		note(pid);
		if (pid > 0) {
			atomic_fetch_add(&st->execs, 1);
			add_kid(f, pid);
		}
		break;
	}
	case 3: /* a child with two registered threads, one of which (not the leader) execs */
		pid = (pid_t)note(fork());
		if (pid == 0) {
			struct csf_snap s;

			prune_after_fork(f);
			csf_thread_snap(&s); /* the leader holds a page; exec ends it */
			f->depth = 2;
			if (pthread_create(&th, NULL, exec_thread, f) == 0)
				pthread_join(th, NULL); /* de_thread kills this thread first */
			_exit(0);
		}
		if (pid > 0) {
			atomic_fetch_add(&st->execs, 1);
			add_kid(f, pid);
		}
		break;
	case 4: /* kill a child in the middle of whatever it does */
		for (int i = 0; i < NKIDS; i++) {
			if (f->kids[i] > 0 && tk_below(&f->rng, 2)) {
				kill(f->kids[i], SIGKILL);
				waitpid(f->kids[i], NULL, 0);
				f->kids[i] = 0;
				atomic_fetch_add(&st->kills, 1);
			}
		}
		break;
	default: /* a short-lived thread of this process */
		c = derive(f);
		if (!c)
			break;
		if (pthread_create(&th, NULL, sub_thread, c) == 0) {
			atomic_fetch_add(&st->threads, 1);
			if (tk_below(&f->rng, 2))
				pthread_join(th, NULL);
			else
				pthread_detach(th);
		} else {
			free(c);
		}
	}
}

static pthread_t g_threads[16];
/*
 * The worker's fuzzing threads by tid, 0 before one starts and after it ends: a signal goes
 * through tgkill(), never pthread_kill(), whose pthread_t may not be stored yet (pthread_create()
 * writes it after the thread runs) or may name a joined thread. glibc then faulted with every
 * signal blocked, and the kernel killed the worker without its handler's report.
 */
static _Atomic pid_t g_tids[16];
static int g_nthreads;

static void op_misc(struct fz *f)
{
	int fd = pick_fd(f), ep;
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT };
	struct epoll_event ev = { .events = EPOLLIN };

	switch (tk_below(&f->rng, 5)) {
	case 0:
		note(poll(&pfd, 1, 0));
		break;
	case 1:
		ep = (int)note(epoll_create1(EPOLL_CLOEXEC));
		if (ep >= 0) {
			note(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
			close(ep);
		}
		break;
	case 2:
		ep = (int)note(inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
		if (ep >= 0) {
			note(inotify_add_watch(ep,
					       tk_below(&f->rng, 2) ? CSF_MOUNT_POINT :
								      CSF_MOUNT_POINT
						       "/" CSF_THREAD_FILE,
					       IN_ALL_EVENTS));
			close(ep);
		}
		break;
	case 3: /* interrupt a sibling thread's system call */
		if (g_nthreads && !f->depth) {
			pid_t tid = atomic_load(&g_tids[tk_below(&f->rng, (uint64_t)g_nthreads)]);

			if (tid)
				note(syscall(SYS_tgkill, getpid(), tid, SIGUSR1));
		}
		break;
	default:
		note(fchdir(fd));
		note(chdir("/"));
	}
}

static void run_ops(struct fz *f, int n)
{
	for (int i = 0; i < n && !expired(); i++) {
		static const char *const names[25] = {
			"open",	    "open",    "open",	  "mmap",  "mmap",  "mmap",   "munmap",
			"mprotect", "mremap",  "madvise", "mlock", "touch", "touch",  "snap",
			"snap",	    "procmem", "rw",	  "ioctl", "file",  "splice", "dup",
			"pass",	    "spawn",   "misc",	  "misc"
		};
		uint64_t op = tk_below(&f->rng, 25);

		atomic_fetch_add(&st->ops, 1);
		cur_op = names[op];
		switch (op) {
		case 0:
		case 1:
		case 2:
			op_open(f);
			break;
		case 3:
		case 4:
		case 5:
			op_mmap(f);
			break;
		case 6:
			op_munmap(f);
			break;
		case 7:
			op_mprotect(f);
			break;
		case 8:
			op_mremap(f);
			break;
		case 9:
			op_madvise(f);
			break;
		case 10:
			op_mlock_msync(f);
			break;
		case 11:
		case 12:
			op_touch(f);
			break;
		case 13:
		case 14:
			lib_snaps(f);
			break;
		case 15:
			op_procmem(f);
			break;
		case 16:
			op_rw(f);
			break;
		case 17:
			op_ioctl(f);
			break;
		case 18:
			op_fileops(f);
			break;
		case 19:
			op_splice(f);
			break;
		case 20:
			op_dup_close(f);
			break;
		case 21:
			op_pass(f);
			break;
		case 22:
			op_spawn(f);
			break;
		default:
			op_misc(f);
		}
	}
}

static void fz_init(struct fz *f, uint64_t seed, int depth)
{
	memset(f, 0, sizeof(*f));
	f->rng = seed;
	f->depth = depth;
	for (int i = 0; i < NFDS; i++)
		f->fds[i] = -1;
}

static void fz_reap(struct fz *f)
{
	for (int i = 0; i < NKIDS; i++) {
		if (f->kids[i] > 0) {
			kill(f->kids[i], SIGKILL);
			waitpid(f->kids[i], NULL, 0);
		}
	}
}

struct thread_arg {
	uint64_t seed;
	int ops, idx;
};

static void *fuzz_thread(void *arg)
{
	struct thread_arg *a = arg;
	struct fz f;

	alt_stack();
	atomic_store(&g_tids[a->idx], gettid());
	fz_init(&f, a->seed, 0);
	run_ops(&f, a->ops);
	atomic_store(&g_tids[a->idx], 0);
	fz_reap(&f);
	return NULL;
}

static void handlers(void)
{
	struct sigaction sa = { .sa_sigaction = on_fault,
				.sa_flags = SA_NODEFER | SA_SIGINFO | SA_ONSTACK };

	alt_stack();
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sa.sa_handler = on_usr1;
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGIO, SIG_IGN); /* O_ASYNC */
}

/* One process of a round: drop privileges, run the threads, reap. */
static void worker(uint64_t seed, int idx, int nthreads, int ops)
{
	struct thread_arg args[16];
	int diag = open("/dev/console", O_WRONLY | O_NOCTTY), null = open("/dev/null", O_RDWR);

	if (diag >= 0 && diag != DIAG_FD) {
		dup2(diag, DIAG_FD);
		close(diag);
	}
	for (int fd = 0; null >= 0 && fd < 3; fd++)
		dup2(null, fd);
	if (null > 2)
		close(null);
	/*
	 * Nothing else of the main process's: its /dev/kmsg reader (an operation clearing the
	 * shared O_NONBLOCK, or reading records, would block it or hide reports from it) and the
	 * other workers' sockets.
	 */
	for (int fd = 3; fd < 1024; fd++)
		if (fd != DIAG_FD && fd != STATS_FD && fd != g_sock_send && fd != g_sock_recv)
			close(fd);
	setpgid(0, 0); /* the round's end kills the group: this process and all it started */
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		_exit(90);
	prctl(PR_SET_DUMPABLE, 1); /* as an ordinary program is: /proc/self/mem works */
	handlers();
	g_nthreads = nthreads;
	for (int i = 0; i < nthreads; i++) {
		args[i].seed = seed ^ ((uint64_t)(idx + 1) << 40) ^ ((uint64_t)(i + 1) << 52);
		args[i].ops = ops;
		args[i].idx = i;
		if (pthread_create(&g_threads[i], NULL, fuzz_thread, &args[i]))
			_exit(91);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(g_threads[i], NULL);
	_exit(0);
}

/* The program an exec runs: inherited descriptors (the statistics' too), a few operations. */
static int exec_child(const char *seed)
{
	struct fz f;

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, STATS_FD, 0);
	if (st == MAP_FAILED) {
		dprintf(DIAG_FD,
			"# fuzz: an exec'ed child cannot map the statistics (%s), so "
			"it runs nothing\n",
			strerror(errno));
		return 4;
	}
	handlers();
	g_deadline = mono_ns() + 5000000000ull;
	fz_init(&f, strtoull(seed, NULL, 0), 2);
	for (int fd = 3, i = 0; fd < 256 && i < NFDS; fd++)
		if (fd_kind(fd) != K_OTHER)
			f.fds[i++] = fd;
	run_ops(&f, SUB_OPS);
	return 0;
}

/*
 * Where this process's children are stuck: each thread's state and kernel stack (as root). Returns
 * how many of those stacks are in the module.
 */
static int show_stuck(void)
{
	char path[320], buf[2048];
	int in_module = 0;
	struct dirent *d;
	DIR *dp = opendir("/proc");

	while (dp && (d = readdir(dp))) {
		pid_t pid = (pid_t)atoi(d->d_name);
		struct dirent *t;
		DIR *tp;

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (pid <= 0 || file_read(path, buf, sizeof(buf)) <= 0 ||
		    atoi(strrchr(buf, ')') ? strrchr(buf, ')') + 4 : "0") != getpid())
			continue; /* ")" is followed by " S PPID" */
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		tp = opendir(path);
		while (tp && (t = readdir(tp))) {
			if (t->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, t->d_name);
			file_read(path, buf, sizeof(buf));
			printf("# fuzz: stuck task %s: %s", t->d_name, buf);
			snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid, t->d_name);
			if (file_read(path, buf, sizeof(buf)) > 0) {
				printf("%s", buf);
				in_module += strstr(buf, "[coarse_stat_fs]") != NULL;
			}
		}
		if (tp)
			closedir(tp);
	}
	if (dp)
		closedir(dp);
	fflush(stdout);
	return in_module;
}

static void errno_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int e = 1; e < MAX_ERRNO; e++) {
		unsigned long c = atomic_load(&st->errs[e]);
		const char *name = strerrorname_np(e);

		if (c && n < len - 40)
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%lu", n ? "," : "",
					      name ? name : "?", c);
	}
	if (!n)
		snprintf(buf, len, "none");
}

/* The command line's settings, parsed in main(). */
static struct {
	uint64_t seed;
	bool repeat, refs_check;
	double seconds;
	int rounds, procs, nthreads, ops;
} g_args = { .refs_check = true, .seconds = 60, .procs = 3, .nthreads = 3, .ops = 400 };

/* n things went wrong during a round: say so, with the command that replays its seed. */
static void say_replay(unsigned long n, const char *what, uint64_t seed)
{
	printf("# fuzz: %lu %s during seed %llu; reproduce with t_fuzz -s %llu -R -p %d -t %d -o %d\n",
	       n, what, (unsigned long long)seed, (unsigned long long)seed, g_args.procs,
	       g_args.nthreads, g_args.ops);
}

SCENARIO(fuzz, "fuzz: no violation, no leak, no kernel report")
{
	uint64_t seed = g_args.seed, round_seed;
	bool repeat = g_args.repeat, refs_check = g_args.refs_check;
	int rounds = g_args.rounds, procs = g_args.procs, nthreads = g_args.nthreads;
	int ops = g_args.ops;
	int reports = 0, leaks = 0, crashes = 0, hangs = 0, done = 0;
	unsigned long violations = atomic_load(&st->violations);
	struct tk_kmsg kmsg;
	uint64_t end;
	int base;
	static char errs[4096];

	tk_kmsg_open(&kmsg);
	/* Orphans of a round come back here, to be killed and reaped with it. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	base = t_module_refs();
	end = mono_ns() + (uint64_t)(g_args.seconds * 1e9);
	printf("# fuzz: %d processes x %d threads x %d operations a round, %.0f s, first seed %llu%s\n",
	       procs, nthreads, ops, g_args.seconds, (unsigned long long)seed,
	       repeat ? " (repeated)" : "");

	for (round_seed = seed; !rounds || done < rounds; round_seed += repeat ? 0 : 1) {
		int socks[8][2], refs, r, alive;
		pid_t pids[8], pgids[8];
		uint64_t now = mono_ns(), limit;

		if (now >= end && (!rounds || done > 0))
			break;
		printf("# fuzz: seed %llu\n", (unsigned long long)round_seed);
		fflush(stdout);
		/* a round lasts at most 15 s, so that a minute covers a few seeds */
		g_deadline = now + 15000000000ull < end || rounds ? now + 15000000000ull : end;
		for (int i = 0; i < procs; i++)
			/* non-blocking: a read() of a random descriptor may land on one */
			if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
				       socks[i]))
				t_die("socketpair");
		for (int i = 0; i < procs; i++) {
			pids[i] = fork();
			if (pids[i] < 0)
				t_die("fork");
			pgids[i] = pids[i];
			setpgid(pids[i], pids[i]); /* as the child does: whichever runs first */
			if (pids[i] == 0) {
				g_sock_send = socks[i][0];
				g_sock_recv = socks[(i + procs - 1) % procs][1];
				worker(round_seed, i, nthreads, ops);
			}
		}
		for (int i = 0; i < procs; i++) {
			close(socks[i][0]);
			close(socks[i][1]);
		}
		/* Wait for the round; a process still there 30 s after its end is a hang. */
		limit = g_deadline + 30000000000ull;
		alive = procs;
		while (alive > 0) {
			int status;
			pid_t pid = waitpid(-1, &status, WNOHANG);

			if (pid > 0) {
				for (int i = 0; i < procs; i++) {
					if (pids[i] != pid)
						continue;
					pids[i] = 0;
					alive--;
					if (!WIFEXITED(status) || WEXITSTATUS(status)) {
						printf("# fuzz: a process of seed %llu ended with status %#x\n",
						       (unsigned long long)round_seed, status);
						crashes++;
					}
				}
				continue;
			}
			if (mono_ns() > limit) {
				printf("# fuzz: seed %llu: %d processes still running 30 s after the round\n",
				       (unsigned long long)round_seed, alive);
				/*
				 * Blocked where the fuzzer asked (a read of a socket whose
				 * O_NONBLOCK an operation cleared): its own doing, and SIGKILL
				 * ends it. Waiting inside the module: a hang.
				 */
				hangs += show_stuck() > 0;
				for (int i = 0; i < procs; i++)
					if (pids[i] > 0)
						kill(pids[i], SIGKILL);
				limit = UINT64_MAX;
			}
			t_sleep_ns(10000000);
		}
		/* What the round's processes started and left behind goes too. */
		for (int i = 0; i < procs; i++)
			kill(-pgids[i], SIGKILL);
		for (uint64_t give_up = mono_ns() + 30000000000ull;;) {
			pid_t r = waitpid(-1, NULL, WNOHANG);

			if (r < 0)
				break; /* no child left */
			if (r > 0)
				continue;
			if (mono_ns() > give_up) {
				printf("# fuzz: seed %llu: processes left 30 s after SIGKILL\n",
				       (unsigned long long)round_seed);
				show_stuck();
				hangs++;
				break;
			}
			t_sleep_ns(10000000);
		}
		refs = refs_check ? t_module_refs_settle(base) : base;
		if (refs != base) {
			printf("# fuzz: seed %llu left the module's references at %d, not %d\n",
			       (unsigned long long)round_seed, refs, base);
			leaks++;
			base = refs; /* report each seed's leak once */
		}
		if (atomic_load(&st->violations) != violations) {
			say_replay(atomic_load(&st->violations) - violations, "violations",
				   round_seed);
			violations = atomic_load(&st->violations);
		}
		r = tk_kmsg_reports(&kmsg);
		if (r) {
			say_replay((unsigned long)r, "kernel reports", round_seed);
			reports += r;
		}
		done++;
	}
	/* Last before the check, so that the three lines a failure keeps in CI's log say what. */
	for (unsigned long i = 0; i < violations && i < NVTEXT; i++)
		printf("# fuzz: violation %lu of %lu: %s\n", i + 1, violations, st->vtext[i]);
	CHECK_EQ(atomic_load(&st->violations), 0);
	CHECK_EQ(leaks, 0);
	/*
	 * A process of the fuzzer killed by a signal is the fuzzer's own damage (it maps,
	 * unmaps and remaps its own memory at random; the last ones seen were the
	 * library's page gone from under it): reported, not counted. The module's
	 * failures are the violations, leaks, hangs and kernel reports above and below.
	 */
	if (crashes)
		printf("# fuzz: %d processes of the fuzzer died of a signal (see above)\n",
		       crashes);
	CHECK_EQ(hangs, 0);
	CHECK_EQ(reports, 0);

	errno_list(errs, sizeof(errs));
	printf("# fuzz: %lu snapshots, %lu faults caught, %lu forks, %lu execs, %lu threads, "
	       "%lu descriptors passed, %lu children killed, %lu violations\n",
	       atomic_load(&st->snaps), atomic_load(&st->faults), atomic_load(&st->forks),
	       atomic_load(&st->execs), atomic_load(&st->threads), atomic_load(&st->passed),
	       atomic_load(&st->kills), atomic_load(&st->violations));
	printf("FIGURE fuzz ops %lu seeds %d errors-by-errno %s kernel-reports %d\n",
	       atomic_load(&st->ops), done, errs, reports);
	printf("FIGURE fuzz violations %lu leaks %d hangs %d fuzzer-processes-crashed %d\n",
	       atomic_load(&st->violations), leaks, hangs, crashes);
}

int main(int argc, char **argv)
{
	bool have_seed = false;
	int opt, fd;

	g_exe = "/proc/self/exe";
	if (argc == 3 && !strcmp(argv[1], "exec-child"))
		return exec_child(argv[2]);
	while ((opt = getopt(argc, argv, "s:Rd:n:p:t:o:L")) != -1) {
		switch (opt) {
		case 's':
			g_args.seed = strtoull(optarg, NULL, 0);
			have_seed = true;
			break;
		case 'R':
			g_args.repeat = true;
			break;
		case 'd':
			g_args.seconds = strtod(optarg, NULL);
			break;
		case 'n':
			g_args.rounds = atoi(optarg);
			break;
		case 'p':
			g_args.procs = atoi(optarg);
			break;
		case 't':
			g_args.nthreads = atoi(optarg);
			break;
		case 'o':
			g_args.ops = atoi(optarg);
			break;
		case 'L':
			g_args.refs_check = false;
			break;
		default:
			fprintf(stderr,
				"usage: t_fuzz [-s SEED] [-R] [-d SECONDS] [-n ROUNDS] [-p PROCS]"
				" [-t THREADS] [-o OPS] [-L]\n");
			return 2;
		}
	}
	if (g_args.procs < 1 || g_args.procs > 8 || g_args.nthreads < 1 || g_args.nthreads > 16)
		t_die("-p 1..8, -t 1..16");
	if (!have_seed)
		g_args.seed = (uint64_t)time(NULL);
	/* The statistics, shared with every process of every round, exec'ed ones included. */
	fd = memfd_create("t_fuzz-stats", 0);
	if (fd < 0 || ftruncate(fd, sizeof(*st)) || dup2(fd, STATS_FD) != STATS_FD)
		t_die("memfd for the statistics");
	if (fd != STATS_FD)
		close(fd);
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, STATS_FD, 0);
	if (st == MAP_FAILED)
		t_die("mmap stats");
	return t_main("t_fuzz");
}
