// SPDX-License-Identifier: GPL-2.0
/*
 * t_fs: the filesystem itself: mount point, files, modes, and what it refuses. The guest's init
 * has loaded the module and mounted it at /sys/kernel/coarse_stat_fs.
 */
#include "../t.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/uapi/coarse_stat_fs.h"

#define MNT CSF_MOUNT_POINT

static int nobody_open_rdwr(void)
{
	int fd = open(MNT "/" CSF_THREAD_FILE, O_RDWR);

	return fd < 0 ? errno : 0;
}

static int nobody_mount(void)
{
	return mount("none", "/tmp", CSF_FS_TYPE, 0, NULL) ? errno : 0;
}

SCENARIO(mount_point, "mount point is a directory under /sys/kernel")
{
	struct stat st;

	REQUIRE(stat(MNT, &st) == 0, "stat " MNT ": %s", strerror(errno));
	CHECK(S_ISDIR(st.st_mode), "mode %o", st.st_mode);
}

SCENARIO(magic, "mounted filesystem has our magic")
{
	struct statfs sfs;

	REQUIRE(statfs(MNT, &sfs) == 0, "statfs: %s", strerror(errno));
	CHECK_EQ(sfs.f_type, CSF_SUPER_MAGIC);
}

/* The fpu file is x86-64's (XSAVE/XRSTOR): elsewhere the module has three files. */
SCENARIO(four_files, "exactly the four files (on arm64 three: no fpu), regular, owned by root; "
		     "the pages 0444, slices 0400, fpu 0600")
{
	static const struct {
		const char *name;
		unsigned int mode;
	} files[] = {
		{ CSF_THREAD_FILE, 0444 },
		{ CSF_CPU_FILE, 0444 },
		{ CSF_SLICES_FILE, 0400 },
#ifdef __x86_64__
		{ CSF_FPU_FILE, 0600 },
#endif
	};
	enum { NFILES = ARRAY_SIZE(files) };
	DIR *d = opendir(MNT);
	struct dirent *de;
	struct stat st;
	int n = 0;

	REQUIRE(d, "opendir: %s", strerror(errno));
	while ((de = readdir(d))) {
		bool known = false;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n++;
		for (int i = 0; i < NFILES; i++)
			known |= !strcmp(de->d_name, files[i].name);
		CHECK(known, "unexpected entry %s", de->d_name);
	}
	closedir(d);
	CHECK_EQ(n, NFILES);
	for (int i = 0; i < NFILES; i++) {
		char path[256];
		bool there;

		snprintf(path, sizeof(path), MNT "/%s", files[i].name);
		there = stat(path, &st) == 0;
		CHECK(there, "stat %s: %s", path, strerror(errno));
		if (!there)
			continue; /* the other files are still checked */
		CHECK(S_ISREG(st.st_mode), "%s: not a regular file", path);
		CHECK_EQ(st.st_mode & 07777, files[i].mode);
		CHECK_EQ(st.st_uid, 0);
		CHECK_EQ(st.st_gid, 0);
	}
}

SCENARIO(refuse_changes, "the files refuse chmod, truncate, unlink and new files, even for root")
{
	struct stat st;

	CHECK_ERRNO(chmod(MNT "/" CSF_CPU_FILE, 0666), EPERM);
	CHECK_ERRNO(truncate(MNT "/" CSF_CPU_FILE, 0), EPERM);
	CHECK_ERRNO(unlink(MNT "/" CSF_CPU_FILE), EPERM);
	CHECK_ERRNO(mkdir(MNT "/dir", 0755), EPERM);
	CHECK_ERRNO(open(MNT "/new", O_CREAT | O_WRONLY, 0644), EACCES);
	CHECK(stat(MNT "/" CSF_CPU_FILE, &st) == 0 && (st.st_mode & 07777) == 0444,
	      "mode changed to %o", st.st_mode & 07777);
}

SCENARIO(unprivileged, "an unprivileged user may not open for writing or mount")
{
	CHECK_EQ(t_as_nobody(nobody_open_rdwr), EACCES);
	CHECK_EQ(t_as_nobody(nobody_mount), EPERM);
}

SCENARIO(mount_options, "unknown mount options are refused")
{
	CHECK_ERRNO(mount("none", "/mnt", CSF_FS_TYPE, 0, "size=1"), EINVAL);
}

SCENARIO(second_mount, "a second mount shows the same files; unmounting it leaves the first")
{
	struct stat st;

	REQUIRE(mount("none", "/mnt", CSF_FS_TYPE, 0, NULL) == 0, "mount: %s", strerror(errno));
	CHECK(stat("/mnt/" CSF_THREAD_FILE, &st) == 0, "stat: %s", strerror(errno));
	CHECK(umount("/mnt") == 0, "umount: %s", strerror(errno));
	CHECK(stat(MNT "/" CSF_THREAD_FILE, &st) == 0, "stat: %s", strerror(errno));
}

int main(void)
{
	return t_main("t_fs");
}
