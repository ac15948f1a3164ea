// SPDX-License-Identifier: GPL-2.0
/*
 * t_bad: everything thread-self refuses, each with its documented errno (docs/interface.md).
 * The harness checks afterwards that none of it left anything in the kernel log.
 */
#include "../t.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/io_uring.h>

#define PATH CSF_MOUNT_POINT "/" CSF_THREAD_FILE
#define NOBODY 65534

static int child_status(pid_t pid)
{
	int status = -1;

	waitpid(pid, &status, 0);
	return status;
}

/* Whether this process maps addr with the permissions perms ("r--s"), from /proc/self/maps. */
static bool mapped_as(const void *addr, const char *perms)
{
	char line[512], want[64];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)))
			found = strstr(line, perms) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * Open path through io_uring with IOSQE_ASYNC, so that an io-wq worker thread does the open on
 * the caller's behalf. Returns the completion's result (a descriptor, or -errno), or -ENOSYS
 * without io_uring.
 */
static int io_uring_open_async(const char *path)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	unsigned int *sq_tail, *sq_array, *cq_head, *cq_tail;
	size_t sq_len, cq_len;
	char *sq, *cq;
	int ring, res;

	ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return -ENOSYS;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		    IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		t_die("io_uring mmap");
	sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	sq_array = (unsigned int *)(sq + p.sq_off.array);
	cq_head = (unsigned int *)(cq + p.cq_off.head);
	cq_tail = (unsigned int *)(cq + p.cq_off.tail);

	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_OPENAT;
	sqes[0].fd = AT_FDCWD;
	sqes[0].addr = (uintptr_t)path;
	sqes[0].open_flags = O_RDONLY;
	sqes[0].flags = IOSQE_ASYNC; /* straight to a worker thread */
	sq_array[*sq_tail & (p.sq_entries - 1)] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		t_die("io_uring_enter");
	if (__atomic_load_n(cq_tail, __ATOMIC_ACQUIRE) == *cq_head)
		t_die("io_uring: no completion");
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) + (*cq_head & (p.cq_entries - 1));
	res = cqe->res;
	__atomic_store_n(cq_head, *cq_head + 1, __ATOMIC_RELEASE);
	munmap(sqes, p.sq_entries * sizeof(*sqes));
	munmap(cq, cq_len);
	munmap(sq, sq_len);
	close(ring);
	return res;
}

/*
 * A descriptor of the main thread's page, opened before any scenario runs (the module is there):
 * the one the refusals of the descriptor itself are tried on.
 */
static int fd;

/* A mapping of the main thread's page, or the end of the program. */
static void *map_page(void)
{
	void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		t_die("mmap");
	return m;
}

SCENARIO(no_write_open, "opening for writing is refused, even for root")
{
	CHECK_ERRNO(open(PATH, O_WRONLY), EACCES);
	CHECK_ERRNO(open(PATH, O_RDWR), EACCES);
	CHECK_ERRNO(open(PATH, O_RDONLY | O_TRUNC), EPERM);
}

SCENARIO(nobody_reads, "an unprivileged user can map the page, and only read it")
{
	pid_t pid = fork();

	if (pid == 0) {
		struct csf_snap s;
		int bad = setgid(NOBODY) || setuid(NOBODY);

		bad |= open(PATH, O_RDWR) != -1 || errno != EACCES;
		bad |= csf_thread_snap(&s) != 0 || s.p.tid != (uint32_t)gettid();
		_exit(bad);
	}
	CHECK_EQ(child_status(pid), 0);
}

SCENARIO(no_read_write_ioctl, "read, write and ioctl on the descriptor are refused")
{
	char buf[16];

	CHECK_ERRNO(read(fd, buf, sizeof(buf)), EINVAL);
	CHECK_ERRNO(write(fd, buf, sizeof(buf)), EBADF);
	CHECK_ERRNO(ioctl(fd, _IO('c', 1), buf), ENOTTY);
}

SCENARIO(mmap_limits, "mmap: only MAP_SHARED, PROT_READ, offset 0, up to st_size")
{
	struct stat st;
	void *m;

	REQUIRE(fstat(fd, &st) == 0, "fstat");
	CHECK_EQ(st.st_size, sysconf(_SC_PAGESIZE));
	CHECK_ERRNO(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0), EINVAL);
	CHECK_ERRNO(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), EACCES);
	CHECK_ERRNO(mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0), EPERM);
	CHECK_ERRNO(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096), ENXIO);
	CHECK_ERRNO(mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0), ENXIO);
	CHECK_ERRNO(mmap(NULL, 0, PROT_READ, MAP_SHARED, fd, 0), EINVAL);
	m = mmap(NULL, 100, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "a short mapping: %s", strerror(errno));
	if (m != MAP_FAILED)
		munmap(m, 100);
}

SCENARIO(mapping_fixed, "the mapping cannot become writable or executable, or grow")
{
	void *m = map_page();

	CHECK_ERRNO(mprotect(m, 4096, PROT_READ | PROT_WRITE), EACCES);
	CHECK_ERRNO(mprotect(m, 4096, PROT_READ | PROT_EXEC), EACCES);
	CHECK_ERRNO(mremap(m, 4096, 8192, MREMAP_MAYMOVE), EFAULT);
	CHECK_EQ(((const struct csf_thread_page *)m)->hdr.magic, CSF_MAGIC);
	munmap(m, 4096);
}

SCENARIO(no_proc_mem_write, "forced writes through /proc/self/mem are refused")
{
	int mem = open("/proc/self/mem", O_RDWR);
	uint32_t v = 0;
	void *m;

	REQUIRE(mem >= 0, "open /proc/self/mem: %s", strerror(errno));
	m = map_page();
	CHECK_ERRNO(pwrite(mem, &v, sizeof(v), (off_t)(uintptr_t)m), EIO);
	CHECK(pread(mem, &v, sizeof(v), (off_t)(uintptr_t)m) == sizeof(v) && v == CSF_MAGIC,
	      "reading through /proc/self/mem: %s", strerror(errno));
	munmap(m, 4096);
	close(mem);
}

SCENARIO(no_ptrace_write, "forced writes through ptrace are refused")
{
	int p[2];
	pid_t pid;
	uintptr_t addr = 0;
	long word;

	REQUIRE(pipe(p) == 0, "pipe");
	pid = fork();
	if (pid == 0) {
		int cfd = open(PATH, O_RDONLY);
		void *cm = mmap(NULL, 4096, PROT_READ, MAP_SHARED, cfd, 0);

		if (write(p[1], &cm, sizeof(cm)) != sizeof(cm))
			_exit(2);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(((const struct csf_thread_page *)cm)->hdr.magic == CSF_MAGIC ? 0 : 1);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &addr, sizeof(addr)) != sizeof(addr)) {
		close(p[0]);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		REQUIRE(false, "fork, or the child's address through the pipe: %s",
			strerror(errno));
	}
	close(p[0]);
	waitpid(pid, NULL, WUNTRACED);
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
	CHECK(errno == 0 && (uint32_t)word == CSF_MAGIC, "peek: %s", strerror(errno));
	CHECK_ERRNO(ptrace(PTRACE_POKEDATA, pid, (void *)addr, (void *)0L), EIO);
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	CHECK_EQ(child_status(pid), 0);
}

SCENARIO(dontneed_sigbus,
	 "MADV_DONTNEED on the mapping makes the next access SIGBUS, nothing worse")
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int cfd = open(PATH, O_RDONLY);
		volatile const uint32_t *cm = mmap(NULL, 4096, PROT_READ, MAP_SHARED, cfd, 0);

		madvise((void *)cm, 4096, MADV_DONTNEED);
		_exit(cm[0] == CSF_MAGIC ? 0 : 1);
	}
	status = child_status(pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS, "status %#x", status);
}

SCENARIO(read_implies_exec, "READ_IMPLIES_EXEC: the files map read-only, never executable")
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int cfd = open(PATH, O_RDONLY), bad = 0;
		void *cm;

		personality(READ_IMPLIES_EXEC); /* PROT_READ now asks for PROT_EXEC too */
		cm = mmap(NULL, 4096, PROT_READ, MAP_SHARED, cfd, 0);
		if (cm == MAP_FAILED) {
			printf("#   mmap with READ_IMPLIES_EXEC: %s\n", strerror(errno));
			_exit(1);
		}
		bad |= !mapped_as(cm, "r--s") << 1;
		errno = 0;
		bad |= (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, cfd, 0) != MAP_FAILED ||
			errno != EPERM)
		       << 2;
		cfd = open(CSF_MOUNT_POINT "/" CSF_CPU_FILE, O_RDONLY);
		cm = mmap(NULL, 4096, PROT_READ, MAP_SHARED, cfd, 0);
		bad |= (cm == MAP_FAILED || !mapped_as(cm, "r--s")) << 3;
		_exit(bad);
	}
	st = child_status(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "status %#x (bits: 2 not r--s, "
	      "4 PROT_EXEC allowed, 8 cpu page)",
	      st);
}

SCENARIO(io_uring_worker, "an io_uring worker cannot open a page on its submitter's behalf")
{
	int res = io_uring_open_async(PATH);

	if (res == -ENOSYS)
		SKIP("no io_uring here");
	if (res >= 0) {
		const struct csf_thread_page *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, res, 0);

		CHECK(0, "opened: a page of tid %u, the submitter is %d",
		      p == MAP_FAILED ? 0 : p->tid, gettid());
		close(res);
	} else {
		CHECK_EQ(res, -EINVAL);
	}
	/* The other files still open through io_uring's workers. */
	res = io_uring_open_async("/dev/null");
	CHECK(res >= 0, "io_uring open of /dev/null: %s", strerror(-res));
	if (res >= 0)
		close(res);
}

int main(void)
{
	fd = open(PATH, O_RDONLY);
	if (fd < 0)
		t_die("open " PATH);
	return t_main("t_bad");
}
