/* SPDX-License-Identifier: GPL-2.0 */
/*
 * csfcat fpu and fpu-report: what csfcat-fpu.c (the commands, the tables, --compare) and
 * csfcat-fpu-log.c (reading trace logs, the statistics) share.
 */
#ifndef CSFCAT_FPU_H
#define CSFCAT_FPU_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One row of a latency table: an instruction (or trace event), RFBM and XINUSE. */
struct fpu_row {
	char event[32]; /* XSAVEOPT, or x86_fpu_latency_xsave */
	bool kernel; /* csfcat fpu: the instruction the kernel itself uses */
	char state[12]; /* csfcat fpu: "init" or "modified"; empty for trace logs */
	uint64_t rfbm, xinuse;
	uint64_t cnt, min, max, p50, p99;
	uint64_t avg, avg97; /* rounded as the series' script rounds: floor(x + 0.5) */
};

/* Exact statistics of n samples, from their sum, the sum of the round(0.97 n) smallest, ... */
struct fpu_sums {
	uint64_t n, min, max, p50, p99, n97;
	unsigned __int128 sum, sum97;
};

void fpu_row_set(struct fpu_row *row, const struct fpu_sums *s);

/* A trace log being read: its event lines grouped by (event, RFBM, XINUSE). */
struct fpu_log;

struct fpu_log *fpu_log_new(void);
void fpu_log_free(struct fpu_log *log);
/* Feed one line (without its newline). */
void fpu_log_line(struct fpu_log *log, const char *line, size_t len);
/* Feed everything fd holds, until its end or until *stop is set; -1 with errno on error. */
int fpu_log_read(struct fpu_log *log, int fd, volatile sig_atomic_t *stop);
/* Lines read, event lines counted, lines that name an event but do not parse. */
void fpu_log_counts(const struct fpu_log *log, uint64_t *lines, uint64_t *events,
		    uint64_t *malformed);
/* The rows, in the order of the series' script (event, then RFBM and XINUSE as signed). */
struct fpu_row *fpu_log_rows(struct fpu_log *log, size_t *n);

#endif /* CSFCAT_FPU_H */
