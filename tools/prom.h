/* SPDX-License-Identifier: GPL-2.0 */
/*
 * prom.c: the Prometheus text format for node_exporter's textfile collector (--prometheus FILE
 * of csfcat mem, slices, fpu and cpu). Each file is written beside FILE under a hidden name,
 * which the collector skips (it reads only *.prom), and renamed over FILE: a scrape sees the
 * old file or the new one, never half of one. The metrics are described in docs/prometheus.md.
 */
#ifndef CSF_TOOLS_PROM_H
#define CSF_TOOLS_PROM_H

#include <limits.h>
#include <stdio.h>

struct prom_file {
	FILE *f; /* write the metrics here */
	const char *path; /* FILE */
	const char *cmd; /* the csfcat command, for its messages */
	char tmp[PATH_MAX]; /* the hidden file until it is renamed */
};

/*
 * Fail early, before minutes of work, when FILE's directory cannot be written: 0, or prints why
 * ("csfcat: CMD: --prometheus FILE: ...") and returns EXIT_FAILURE.
 */
int prom_check_dir(const char *cmd, const char *path);
/* Open the hidden file beside path, readable by the exporter's user: 0, or -1 (said why). */
int prom_begin(struct prom_file *p, const char *cmd, const char *path);
/* Write it out and rename it over FILE: 0, or -1 (said why; FILE is left as it was). */
int prom_commit(struct prom_file *p);
/* A metric's "# HELP" and "# TYPE" lines; help must hold no newline or backslash. */
void prom_family(struct prom_file *p, const char *name, const char *type, const char *help);
/* A label value with \, " and newline escaped, as the format wants, into buf (len >= 1): buf. */
const char *prom_label(const char *value, char *buf, size_t len);

#endif /* CSF_TOOLS_PROM_H */
