// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat: print what coarse_stat_fs offers, as text or (--json) for other programs. See
 * csfcat(1) and "csfcat --help". This file dispatches to the commands, each in a file of its
 * own, and holds what they share.
 *
 * Exit status: 0 success, 1 an error, 2 a usage error, 3 the module is not loaded, 4 the
 * filesystem is not mounted, 5 the kernel lacks what the command needs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/coarse_stat_fs.h"
#include "csfcat.h"
#include "util.h"

const char *csfcat_prog = "csfcat";

static const struct csfcat_cmd *const cmds[] = {
	&csfcat_cmd_cpu, &csfcat_cmd_thread, &csfcat_cmd_self,	     &csfcat_cmd_slices,
	&csfcat_cmd_mem, &csfcat_cmd_fpu,    &csfcat_cmd_fpu_report,
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s COMMAND [ARGS]\n", csfcat_prog);
	fprintf(f, "Print what coarse_stat_fs offers (" CSF_MOUNT_POINT ").\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		const char *h = cmds[i]->help, *nl;

		fprintf(f, "  %s%s%s\n", cmds[i]->name, *cmds[i]->args ? " " : "", cmds[i]->args);
		for (; *h; h = *nl ? nl + 1 : nl) {
			nl = strchrnul(h, '\n');
			fprintf(f, "      %.*s\n", (int)(nl - h), h);
		}
	}
	fprintf(f, "\nOptions:\n"
		   "  -h, --help  this text\n"
		   "\n"
		   "Every command that prints numbers takes --json: one JSON object per line.\n"
		   "Exit status: 0 success, 1 error, 2 usage error, 3 module not loaded,\n"
		   "4 filesystem not mounted, 5 the kernel lacks what the command needs.\n");
}

int csfcat_map_error(const char *what)
{
	struct stat st;
	int e = errno;

	if (e == ENOENT && stat(CSF_MOUNT_POINT, &st)) {
		fprintf(stderr,
			"%s: the coarse_stat_fs module is not loaded (no " CSF_MOUNT_POINT ").\n"
			"Load it with: sudo insmod kmod/coarse_stat_fs.ko (or sudo modprobe "
			"coarse_stat_fs)\n",
			csfcat_prog);
		return EXIT_NOT_LOADED;
	}
	if (e == ENOENT) {
		fprintf(stderr,
			"%s: coarse_stat_fs is not mounted.\n"
			"Mount it with: sudo mount -t coarse_stat_fs none " CSF_MOUNT_POINT "\n",
			csfcat_prog);
		return EXIT_NOT_MOUNTED;
	}
	if (e == EPROTO)
		fprintf(stderr, "%s: %s: the module speaks another ABI than this csfcat (%d)\n",
			csfcat_prog, what, CSF_ABI_VERSION);
	else
		fprintf(stderr, "%s: %s: %s\n", csfcat_prog, what, strerror(e));
	return EXIT_FAILURE;
}

int csfcat_usage_error(const char *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "%s: %s: %s%s%s (see %s --help)\n", csfcat_prog, cmd, what, arg ? " " : "",
		arg ? arg : "", csfcat_prog);
	return EXIT_USAGE;
}

int csfcat_parse_json_only(int argc, char **argv, bool *json)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' }, { 0 } };
	int c;

	*json = false;
	optind = 0; /* glibc: reinitialize, main() already parsed */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'j')
			return csfcat_usage_error(argv[0], "unknown option", argv[optind - 1]);
		*json = true;
	}
	return 0;
}

double csfcat_ms(const void *hdr, uint64_t cyc)
{
	return (double)csf_cyc_to_ns((const struct csf_hdr *)hdr, cyc) / 1e6;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (!strcmp(argv[0], cmds[i]->name))
			return cmds[i]->run(argc, argv);
	}
	fprintf(stderr, "%s: unknown command: %s (see %s --help)\n", csfcat_prog, argv[0],
		csfcat_prog);
	return EXIT_USAGE;
}
