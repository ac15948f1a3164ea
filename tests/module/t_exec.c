// SPDX-License-Identifier: GPL-2.0
/*
 * t_exec: what a page shows across execve(), seen by another process that holds a descriptor
 * of it. An ordinary exec goes on counting; an exec that gains privileges (setuid, setgid, file
 * capabilities) or runs a program its caller may not read ends the page: the holder must not
 * watch a privileged program's syscalls, bytes and switches.
 *
 * The scenario, as the issue described it: A (uid NOBODY) opens thread-self, forks B, which
 * inherits the descriptor, closes its own copy and execs a program. The program ("worker", this
 * file again) does 200 reads of /dev/zero once B says go. B maps the descriptor and compares
 * snapshots taken before and after.
 */
#include "../t.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/capability.h>

#define PATH CSF_MOUNT_POINT "/" CSF_THREAD_FILE
#define NOBODY 65534
#define READS 200

/* The exec'ed program: say ready, wait for go, read, say done, exit. */
static int worker(int ready, int go, int done)
{
	char c = 0, buf[64];
	int z = open("/dev/zero", O_RDONLY);

	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1 || z < 0)
		return 1;
	for (int i = 0; i < READS; i++)
		if (read(z, buf, sizeof(buf)) != sizeof(buf))
			return 1;
	return write(done, &c, 1) == 1 ? 0 : 1;
}

/*
 * After a setuid exec, with the descriptor the unprivileged caller opened: its page has ended;
 * a new open gives this program a page of its own. Exit status 0 when both hold.
 */
static int reopen(int old)
{
	const struct csf_thread_page *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, old, 0);
	struct csf_snap s;

	if (p == MAP_FAILED || geteuid() != 0)
		return 10;
	if (!(p->flags & CSF_THREAD_ENDED))
		return 11;
	if (csf_thread_snap(&s))
		return 12;
	if ((s.p.flags & CSF_THREAD_STOPPED) || s.p.start_tsc <= p->start_tsc ||
	    s.p.tid != (uint32_t)gettid())
		return 13;
	return 0;
}

struct result {
	struct csf_snap a, b;
};

/*
 * Run the scenario with PROG as the exec'ed program; B's findings go to r. Returns false when
 * something other than the page went wrong.
 */
static bool scenario(const char *prog, struct result *r)
{
	int ready[2], go[2], done[2], res[2], status;
	ssize_t got;
	pid_t a;

	if (pipe(ready) || pipe(go) || pipe(done) || pipe(res))
		t_die("pipe");
	a = fork();
	if (a == 0) {
		char args[3][12];
		int fd;
		pid_t b;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(90);
		fd = open(PATH, O_RDONLY);
		if (fd < 0)
			_exit(91);
		b = fork();
		if (b == 0) { /* B: the watcher, with A's descriptor */
			const struct csf_thread_page *p;
			struct result out;
			char c;

			p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
			if (p == MAP_FAILED || read(ready[0], &c, 1) != 1)
				_exit(92);
			csf_page_snap(p, &out.a);
			if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
				_exit(93);
			/*
			 * The counters reach the page at a switch-out or at the end, and the program
			 * may not switch out after its reads (a 1 ms sleep whose timer fired before
			 * it blocked did not, on the debug kernel): wait for its exit to end the page,
			 * 10 s at most. A page that a privileged exec ended is ended already.
			 */
			for (int i = 0; i < 5000; i++) {
				t_sleep_ns(2000000);
				csf_page_snap(p, &out.b);
				if (out.b.p.flags & CSF_THREAD_ENDED)
					break;
			}
			_exit(write(res[1], &out, sizeof(out)) == sizeof(out) ? 0 : 94);
		}
		close(fd); /* A keeps no descriptor: only B's holds the object */
		snprintf(args[0], sizeof(args[0]), "%d", ready[1]);
		snprintf(args[1], sizeof(args[1]), "%d", go[0]);
		snprintf(args[2], sizeof(args[2]), "%d", done[1]);
		execl(prog, prog, "worker", args[0], args[1], args[2], (char *)NULL);
		_exit(95);
	}
	if (a < 0)
		t_die("fork");
	/*
	 * The pipes are A's and B's: with no end left here, a reader among them sees the end of
	 * the file when the other side dies, rather than waiting for us.
	 */
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	close(res[1]);
	got = read(res[0], r, sizeof(*r));
	close(res[0]);
	waitpid(a, &status, 0);
	if (got != sizeof(*r)) {
		printf("#   the watcher reported nothing\n");
		return false;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("#   %s: exit status %#x\n", prog, status);
		return false;
	}
	return true;
}

/* A copy of this program at path, owned by root, with mode. */
static void install(const char *path, mode_t mode)
{
	int in = open("/proc/self/exe", O_RDONLY), out;
	char buf[65536];
	ssize_t n;

	unlink(path);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0700);
	if (in < 0 || out < 0)
		t_die("copy to %s", path);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			t_die("write %s", path);
	close(in);
	close(out);
	if (chown(path, 0, 0) || chmod(path, mode))
		t_die("chmod %s", path);
}

static void print_page(const char *what, const struct result *r)
{
	printf("#   %s: syscr %llu -> %llu, flags %#x -> %#x, state %u, extrapolated %d\n", what,
	       (unsigned long long)r->a.p.syscr, (unsigned long long)r->b.p.syscr, r->a.p.flags,
	       r->b.p.flags, r->b.p.state, r->b.extrapolated);
}

/* The page of a program the watcher may not watch: ended at the exec, frozen since. */
static void check_ended(const struct result *r)
{
	uint64_t sum = 0;

	CHECK(r->b.p.flags & CSF_THREAD_ENDED, "page not marked ended");
	CHECK_EQ(r->b.p.state, CSF_STATE_ENDED);
	CHECK(!r->b.extrapolated, "a snapshot still extrapolates");
	CHECK_EQ(r->b.p.syscr, r->a.p.syscr); /* the privileged reads are not seen */
	CHECK_EQ(r->b.p.rchar, r->a.p.rchar);
	CHECK_EQ(r->b.p.nr_block, r->a.p.nr_block);
	for (int i = 0; i < CSF_NR_STATES; i++)
		CHECK(r->b.p.cyc[i] == r->a.p.cyc[i], "bucket %d moved", i);
	for (int i = 0; i < CSF_NR_STATES; i++)
		sum += r->b.p.cyc[i];
	CHECK(sum == r->b.p.last_switch_tsc - r->b.p.start_tsc, "buckets do not add up");
}

/*
 * Run the scenario with a fresh copy of this program at prog, with mode, as the exec'ed program;
 * the copy is removed afterwards. Returns what scenario() returns.
 */
static bool run_copy(const char *prog, mode_t mode, struct result *r)
{
	bool ok;

	install(prog, mode);
	ok = scenario(prog, r);
	unlink(prog);
	return ok;
}

/* The program's exit ends the page, with its counters as they were then. */
SCENARIO(plain, "an ordinary exec goes on counting, and the holder sees the program's reads")
{
	struct result r;

	REQUIRE(run_copy("/tmp/t_exec_plain", 0755, &r), "scenario");
	print_page("plain", &r);
	CHECK(!(r.a.p.flags & CSF_THREAD_STOPPED), "flags %#x", r.a.p.flags);
	CHECK(r.b.p.flags & CSF_THREAD_ENDED, "flags %#x: the program's exit did not end the page",
	      r.b.p.flags);
	CHECK(r.b.p.syscr >= r.a.p.syscr + READS, "syscr %llu -> %llu",
	      (unsigned long long)r.a.p.syscr, (unsigned long long)r.b.p.syscr);
}

SCENARIO(setuid_ends, "a setuid-root exec ends the page: the holder sees nothing of the program")
{
	struct result r;

	REQUIRE(run_copy("/tmp/t_exec_setuid", 04755, &r), "scenario");
	print_page("setuid", &r);
	check_ended(&r);
}

SCENARIO(setgid_ends, "a setgid exec ends the page")
{
	struct result r;

	REQUIRE(run_copy("/tmp/t_exec_setgid", 02755, &r), "scenario");
	print_page("setgid", &r);
	check_ended(&r);
}

SCENARIO(caps_end, "an exec that gains file capabilities ends the page")
{
	static const char prog[] = "/tmp/t_exec_caps";
	struct vfs_cap_data cap = {
		.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE,
		.data = { { .permitted = 1u << CAP_NET_RAW } },
	};
	struct result r;
	bool ok;

	install(prog, 0755);
	if (setxattr(prog, "security.capability", &cap, sizeof(cap), 0)) {
		int e = errno;

		unlink(prog);
		SKIP("no file capabilities on /tmp: %s", strerror(e));
	}
	ok = scenario(prog, &r);
	unlink(prog);
	REQUIRE(ok, "scenario");
	print_page("caps", &r);
	check_ended(&r);
}

SCENARIO(unreadable_ends, "an exec of a program its caller may not read ends the page")
{
	struct result r;

	REQUIRE(run_copy("/tmp/t_exec_unreadable", 0711, &r), "scenario");
	print_page("unreadable", &r);
	check_ended(&r);
}

SCENARIO(reopen_after_setuid, "after a privileged exec, the program's own open starts a new page")
{
	static const char prog[] = "/tmp/t_exec_setuid";
	pid_t pid;
	int status;

	install(prog, 04755);
	pid = fork();
	if (pid == 0) {
		char arg[12];
		int fd;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(90);
		fd = open(PATH, O_RDONLY); /* inherited across the exec */
		snprintf(arg, sizeof(arg), "%d", fd);
		execl(prog, "t_exec", "reopen", arg, (char *)NULL);
		_exit(91);
	}
	waitpid(pid, &status, 0);
	unlink(prog);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "worker"))
		return worker(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "reopen"))
		return reopen(atoi(argv[2]));
	if (geteuid() != 0) {
		printf("# t_exec needs root, to install setuid programs\n");
		return 4;
	}
	/* Each scenario installs its copies of this program in /tmp (tmpfs without nosuid). */
	return t_main("t_exec");
}
