/* SPDX-License-Identifier: GPL-2.0 */
/*
 * csfcat: what its commands share. csfcat.c dispatches; each capability has its own file
 * (csfcat_thread.c, csfcat_cpu.c, ...) that defines one or more struct csfcat_cmd; json.c
 * writes the --json forms (json.h), prom.c the --prometheus files (prom.h).
 */
#ifndef CSFCAT_H
#define CSFCAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

enum { EXIT_USAGE = 2, EXIT_NOT_LOADED = 3, EXIT_NOT_MOUNTED = 4, EXIT_UNSUPPORTED = 5 };

extern const char *csfcat_prog;

/* One command: "csfcat NAME ARGS". run() gets argv[0] == NAME; it returns the exit status. */
struct csfcat_cmd {
	const char *name;
	const char *args; /* its synopsis after the name, for the usage text */
	const char *help; /* one or more lines, each indented by the usage text */
	int (*run)(int argc, char **argv);
};

extern const struct csfcat_cmd csfcat_cmd_cpu, csfcat_cmd_thread, csfcat_cmd_self,
	csfcat_cmd_slices, csfcat_cmd_mem, csfcat_cmd_fpu, csfcat_cmd_fpu_report;

/* Explain a failure to map a page (errno), and return the exit status that goes with it. */
int csfcat_map_error(const char *what);
/* Print "csfcat: CMD: WHAT [ARG] (see csfcat --help)" and return EXIT_USAGE; ARG may be NULL. */
int csfcat_usage_error(const char *cmd, const char *what, const char *arg);
/* Parse the options common to the printing commands: --json (and -h). */
int csfcat_parse_json_only(int argc, char **argv, bool *json);

/* csfcat cpu --prometheus (csfcat_cpu_prom.c): the metrics in path; 0, or -1 (said why). */
int cpu_prom_write(const char *path, uint32_t period_us);

/* Cycles to ms with a page's conversion. */
double csfcat_ms(const void *hdr, uint64_t cyc);

#endif /* CSFCAT_H */
