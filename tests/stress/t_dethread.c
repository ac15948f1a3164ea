// SPDX-License-Identifier: GPL-2.0
/*
 * t_dethread: execve() from a thread that is not the leader, while other processes hold the
 * pages of every thread (the kernel's de_thread(): the other threads are killed, the exec'ing
 * thread takes the leader's place). Each round forks a child whose leader and three threads open
 * thread-self and pass the descriptors to the parent; then a non-leader thread execs this
 * program. The new program must find its page still counting, the same object as before (its
 * notifier survives exec) and open it again. The parent must see every page it holds ended and
 * frozen, with the sum rule intact, once the child is gone. Every third round the parent kills
 * the child with SIGKILL at a random moment around the exec instead.
 */
#include "../tk.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define PATH CSF_MOUNT_POINT "/" CSF_THREAD_FILE
#define THREADS 3
#define ROUNDS 24

static int sock = -1;
static pthread_barrier_t sent;
static const char *self_exe;

static void send_fd(int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char c = 'f';
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sock, &msg, 0) != 1)
		_exit(20);
}

static int recv_fd(int s)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char c;
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(s, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static const struct csf_thread_page *map_fd(int fd)
{
	void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

static uint64_t sum(const struct csf_thread_page *p)
{
	uint64_t s = 0;

	for (int i = 0; i < CSF_NR_STATES; i++)
		s += p->cyc[i];
	return s;
}

/* A thread of the child: register, pass the page, then the first one execs. */
static void *child_thread(void *arg)
{
	long idx = (long)arg;
	int fd = open(PATH, O_RDONLY); /* no O_CLOEXEC: it goes along across exec */
	const struct csf_thread_page *p = map_fd(fd);
	char fds[16], start[32];

	if (fd < 0 || !p)
		_exit(21);
	send_fd(fd);
	pthread_barrier_wait(&sent);
	if (idx != 0)
		for (;;)
			pause(); /* de_thread kills this one */
	snprintf(fds, sizeof(fds), "%d", fd);
	snprintf(start, sizeof(start), "%llu", (unsigned long long)p->start_tsc);
	execl(self_exe, self_exe, "after-exec", fds, start, (char *)NULL);
	_exit(22);
}

static void child(void)
{
	pthread_t th[THREADS];
	int fd = open(PATH, O_RDONLY);

	if (fd < 0 || !map_fd(fd))
		_exit(23);
	send_fd(fd); /* the leader's page */
	pthread_barrier_init(&sent, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, child_thread, (void *)i))
			_exit(24);
	for (;;)
		pause();
}

/* The exec'ed program, now the leader: its page goes on, and an open finds the same object. */
static int after_exec(const char *fdstr, const char *startstr)
{
	int fd = atoi(fdstr), again;
	uint64_t start = strtoull(startstr, NULL, 10);
	const struct csf_thread_page *p = map_fd(fd), *q;
	struct csf_snap s;

	if (!p)
		return 30;
	if ((p->flags & CSF_THREAD_STOPPED) || p->state >= CSF_NR_STATES)
		return 31; /* an ordinary exec must not end the page */
	if (p->start_tsc != start)
		return 32;
	again = open(PATH, O_RDONLY | O_CLOEXEC);
	q = again >= 0 ? map_fd(again) : NULL;
	if (!q || q->start_tsc != start)
		return 33;
	if (csf_thread_snap(&s) || s.p.start_tsc != start)
		return 34;
	if (sum(&s.p) != s.tsc - s.p.start_tsc)
		return 35;
	return 0;
}

SCENARIO(exec_non_leader, "exec from a non-leader thread while another process holds every page")
{
	long held = 0, ended = 0, execs = 0, killed = 0;
	uint64_t rng = 0xde7a;
	int base;

	t_sleep_ns(20000000);
	base = t_module_refs();
	for (int r = 0; r < ROUNDS; r++) {
		const struct csf_thread_page *pages[THREADS + 1] = { 0 };
		int sp[2], fds[THREADS + 1], status, got = 0;
		bool kill_it = r % 3 == 2;
		struct timeval tv = { .tv_sec = 20 };
		pid_t pid;

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp))
			t_die("socketpair");
		setsockopt(sp[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		pid = fork();
		if (pid == 0) {
			close(sp[0]);
			sock = sp[1];
			child();
		}
		close(sp[1]);
		for (int i = 0; i <= THREADS; i++) {
			fds[i] = recv_fd(sp[0]);
			if (fds[i] < 0)
				break;
			pages[i] = map_fd(fds[i]);
			got++;
		}
		close(sp[0]);
		CHECK_EQ(got, THREADS + 1);
		if (kill_it) {
			t_sleep_ns(tk_below(&rng, 20000000));
			kill(pid, SIGKILL);
		}
		waitpid(pid, &status, 0);
		if (kill_it) {
			killed++;
			CHECK(WIFSIGNALED(status) || (WIFEXITED(status) && !WEXITSTATUS(status)),
			      "round %d: status %#x", r, status);
		} else {
			execs++;
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "round %d: the exec'ed program says %d (status %#x)", r,
			      WIFEXITED(status) ? WEXITSTATUS(status) : -1, status);
		}
		for (int i = 0; i < got; i++) {
			const struct csf_thread_page *p = pages[i];

			held++;
			if (!p) {
				CHECK(p, "round %d: cannot map page %d", r, i);
				continue;
			}
			if ((p->flags & CSF_THREAD_ENDED) && p->state == CSF_STATE_ENDED)
				ended++;
			else
				CHECK(0, "round %d: page %d not ended (flags %#x state %u)", r, i,
				      p->flags, p->state);
			CHECK(sum(p) == p->last_switch_tsc - p->start_tsc,
			      "round %d: page %d: buckets %llu, span %llu", r, i,
			      (unsigned long long)sum(p),
			      (unsigned long long)(p->last_switch_tsc - p->start_tsc));
			munmap((void *)p, 4096);
			close(fds[i]);
		}
	}
	printf("FIGURE dethread execs %ld killed %ld pages-held %ld pages-ended %ld\n", execs,
	       killed, held, ended);
	CHECK_EQ(ended, held);
	CHECK_EQ(t_module_refs_settle(base), base);
}

int main(int argc, char **argv)
{
	self_exe = "/proc/self/exe";
	if (argc == 4 && !strcmp(argv[1], "after-exec"))
		return after_exec(argv[2], argv[3]);
	return t_main("t_dethread");
}
