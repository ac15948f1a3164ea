/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tjson.h: check the --json output of csfcat in tests. tjson_valid() checks that a text is one
 * JSON value per line (RFC 8259 syntax, nothing more); tjson_num() finds the first member of a
 * given name anywhere in it and returns its number.
 */
#ifndef CSF_TESTS_TJSON_H
#define CSF_TESTS_TJSON_H

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *tjson_value(const char *p, int depth);

static const char *tjson_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *tjson_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *tjson_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (isdigit((unsigned char)*p))
		while (isdigit((unsigned char)*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p > s ? p : NULL;
}

static const char *tjson_members(const char *p, int depth, char close, bool keys)
{
	p = tjson_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (keys) {
			p = tjson_string(tjson_ws(p));
			if (!p)
				return NULL;
			p = tjson_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = tjson_value(p, depth + 1);
		if (!p)
			return NULL;
		p = tjson_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *tjson_value(const char *p, int depth)
{
	if (depth > 64)
		return NULL;
	p = tjson_ws(p);
	switch (*p) {
	case '{':
		return tjson_members(p, depth, '}', true);
	case '[':
		return tjson_members(p, depth, ']', false);
	case '"':
		return tjson_string(p);
	case 't':
		return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f':
		return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n':
		return strncmp(p, "null", 4) ? NULL : p + 4;
	default:
		return tjson_number(p);
	}
}

/* Each non-empty line of text is one JSON value. */
static inline bool tjson_valid(const char *text)
{
	const char *p = text;

	while (*p) {
		if (*p == '\n') {
			p++;
			continue;
		}
		p = tjson_value(p, 0);
		if (!p)
			return false;
		p = tjson_ws(p);
		if (*p && *p != '\n')
			return false;
	}
	return p != text;
}

/* The number of the first member "key" in text; *found says whether there was one. */
static inline double tjson_num(const char *text, const char *key, bool *found)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(text, pat);
	*found = p && tjson_number(p + strlen(pat));
	return *found ? strtod(p + strlen(pat), NULL) : 0;
}

#endif /* CSF_TESTS_TJSON_H */
