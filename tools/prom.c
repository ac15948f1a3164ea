// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text format for node_exporter's textfile collector: see prom.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csfcat.h"
#include "prom.h"

#define prom_err(cmd, fmt, ...) \
	fprintf(stderr, "%s: %s: " fmt "\n", csfcat_prog, cmd, ##__VA_ARGS__)

int prom_check_dir(const char *cmd, const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		strcpy(dir, ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path + (slash == path)), path);
	if (access(dir, W_OK | X_OK)) {
		prom_err(cmd, "--prometheus %s: cannot write in %s: %s", path, dir,
			 strerror(errno));
		return EXIT_FAILURE;
	}
	return 0;
}

int prom_begin(struct prom_file *p, const char *cmd, const char *path)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0, fd;

	p->f = NULL;
	p->cmd = cmd;
	p->path = path;
	if (snprintf(p->tmp, sizeof(p->tmp), "%.*s.%s.XXXXXX", dirlen, path, path + dirlen) >=
	    (int)sizeof(p->tmp)) {
		prom_err(cmd, "--prometheus %s: name too long", path);
		return -1;
	}
	/* mkstemp() makes it 0600: the exporter runs as its own user. */
	fd = mkstemp(p->tmp);
	if (fd < 0 || fchmod(fd, 0644) || !(p->f = fdopen(fd, "w"))) {
		prom_err(cmd, "--prometheus: %s: %s", p->tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(p->tmp);
		}
		return -1;
	}
	return 0;
}

int prom_commit(struct prom_file *p)
{
	FILE *f = p->f;

	p->f = NULL;
	if (fflush(f) || ferror(f) || fsync(fileno(f))) {
		prom_err(p->cmd, "--prometheus: writing %s: %s", p->tmp, strerror(errno));
		fclose(f);
		unlink(p->tmp);
		return -1;
	}
	if (fclose(f) || rename(p->tmp, p->path)) {
		prom_err(p->cmd, "--prometheus: %s: %s", p->path, strerror(errno));
		unlink(p->tmp);
		return -1;
	}
	return 0;
}

void prom_family(struct prom_file *p, const char *name, const char *type, const char *help)
{
	fprintf(p->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

const char *prom_label(const char *value, char *buf, size_t len)
{
	size_t w = 0;

	for (const char *r = value; *r && w + 3 < len; r++) {
		if (*r == '\\' || *r == '"') {
			buf[w++] = '\\';
			buf[w++] = *r;
		} else if (*r == '\n') {
			buf[w++] = '\\';
			buf[w++] = 'n';
		} else {
			buf[w++] = *r;
		}
	}
	buf[w] = 0;
	return buf;
}
