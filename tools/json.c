// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat: a small streaming JSON writer for the --json forms. Values are written as they come;
 * a stack remembers, per open object or array, whether the next member needs a comma.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "json.h"

#define JSON_DEPTH 16

static bool json_more[JSON_DEPTH]; /* a member was written at this depth */
static int json_depth;

static void json_put_string(const char *s)
{
	putchar('"');
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '"':
			fputs("\\\"", stdout);
			break;
		case '\\':
			fputs("\\\\", stdout);
			break;
		case '\n':
			fputs("\\n", stdout);
			break;
		case '\t':
			fputs("\\t", stdout);
			break;
		default:
			if (*c < 0x20)
				printf("\\u%04x", *c);
			else
				putchar(*c);
		}
	}
	putchar('"');
}

/* The comma and the key before a value. */
static void json_member(const char *key)
{
	if (json_depth > 0 && json_depth <= JSON_DEPTH) {
		if (json_more[json_depth - 1])
			putchar(',');
		json_more[json_depth - 1] = true;
	}
	if (key) {
		json_put_string(key);
		putchar(':');
	}
}

static void json_open(const char *key, char c)
{
	json_member(key);
	putchar(c);
	if (json_depth < JSON_DEPTH)
		json_more[json_depth] = false;
	json_depth++;
}

void json_begin(const char *key)
{
	json_open(key, '{');
}

void json_end(void)
{
	putchar('}');
	json_depth--;
}

void json_begin_array(const char *key)
{
	json_open(key, '[');
}

void json_end_array(void)
{
	putchar(']');
	json_depth--;
}

void json_u64(const char *key, uint64_t v)
{
	json_member(key);
	printf("%" PRIu64, v);
}

void json_i64(const char *key, int64_t v)
{
	json_member(key);
	printf("%" PRId64, v);
}

void json_double(const char *key, double v, int decimals)
{
	json_member(key);
	if (isfinite(v))
		printf("%.*f", decimals, v);
	else
		fputs("null", stdout); /* JSON has no NaN or infinity */
}

void json_str(const char *key, const char *s)
{
	json_member(key);
	json_put_string(s);
}

void json_bool(const char *key, bool v)
{
	json_member(key);
	fputs(v ? "true" : "false", stdout);
}

void json_null(const char *key)
{
	json_member(key);
	fputs("null", stdout);
}

void json_flush(void)
{
	putchar('\n');
	fflush(stdout);
}
