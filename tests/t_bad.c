// SPDX-License-Identifier: GPL-2.0
/*
 * t_bad: everything thread-self refuses, each with its documented errno (README, "Interface").
 * The harness checks afterwards that none of it left anything in the kernel log.
 */
#include "t.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#define PATH CSF_MOUNT_POINT "/" CSF_THREAD_FILE
#define NOBODY 65534

static int child_status(pid_t pid)
{
	int status = -1;

	waitpid(pid, &status, 0);
	return status;
}

int main(void)
{
	int fd = open(PATH, O_RDONLY);
	void *m;

	if (fd < 0)
		t_die("open " PATH);

	TEST("opening for writing is refused, even for root") {
		CHECK_ERRNO(open(PATH, O_WRONLY), EACCES);
		CHECK_ERRNO(open(PATH, O_RDWR), EACCES);
		CHECK_ERRNO(open(PATH, O_RDONLY | O_TRUNC), EPERM);
	}

	TEST("an unprivileged user can map the page, and only read it") {
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

	TEST("read, write and ioctl on the descriptor are refused") {
		char buf[16];

		CHECK_ERRNO(read(fd, buf, sizeof(buf)), EINVAL);
		CHECK_ERRNO(write(fd, buf, sizeof(buf)), EBADF);
		CHECK_ERRNO(ioctl(fd, _IO('c', 1), buf), ENOTTY);
	}

	TEST("mmap: only MAP_SHARED, PROT_READ, offset 0, up to st_size") {
		struct stat st;

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

	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		t_die("mmap");

	TEST("the mapping cannot become writable or executable, or grow") {
		CHECK_ERRNO(mprotect(m, 4096, PROT_READ | PROT_WRITE), EACCES);
		CHECK_ERRNO(mprotect(m, 4096, PROT_READ | PROT_EXEC), EACCES);
		CHECK_ERRNO(mremap(m, 4096, 8192, MREMAP_MAYMOVE), EFAULT);
		CHECK_EQ(((const struct csf_thread_page *)m)->hdr.magic, CSF_MAGIC);
	}

	TEST("forced writes through /proc/self/mem are refused") {
		int mem = open("/proc/self/mem", O_RDWR);
		uint32_t v = 0;

		REQUIRE(mem >= 0, "open /proc/self/mem: %s", strerror(errno));
		CHECK_ERRNO(pwrite(mem, &v, sizeof(v), (off_t)(uintptr_t)m), EIO);
		CHECK(pread(mem, &v, sizeof(v), (off_t)(uintptr_t)m) == sizeof(v) && v == CSF_MAGIC,
		      "reading through /proc/self/mem: %s", strerror(errno));
		close(mem);
	}

	TEST("forced writes through ptrace are refused") {
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
		REQUIRE(read(p[0], &addr, sizeof(addr)) == sizeof(addr), "pipe read");
		waitpid(pid, NULL, WUNTRACED);
		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
		CHECK(errno == 0 && (uint32_t)word == CSF_MAGIC, "peek: %s", strerror(errno));
		CHECK_ERRNO(ptrace(PTRACE_POKEDATA, pid, (void *)addr, (void *)0L), EIO);
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		CHECK_EQ(child_status(pid), 0);
		close(p[0]);
		close(p[1]);
	}

	TEST("MADV_DONTNEED on the mapping makes the next access SIGBUS, nothing worse") {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			int cfd = open(PATH, O_RDONLY);
			volatile const uint32_t *cm =
				mmap(NULL, 4096, PROT_READ, MAP_SHARED, cfd, 0);

			madvise((void *)cm, 4096, MADV_DONTNEED);
			_exit(cm[0] == CSF_MAGIC ? 0 : 1);
		}
		status = child_status(pid);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS, "status %#x", status);
	}

	munmap(m, 4096);
	close(fd);
	return t_done("t_bad");
}
