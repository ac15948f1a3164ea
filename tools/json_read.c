// SPDX-License-Identifier: GPL-2.0
/*
 * Reading JSON (json.h): a recursive-descent parser of RFC 8259's syntax into a tree of
 * struct json_value, for csfcat fpu-report --compare and the tests' checks of --json.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Deeper than anything csfcat writes, shallow enough for the stack. */
#define JSON_READ_DEPTH 64

static const char *parse_value(const char *p, struct json_value *v, int depth);

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* A growing string; out of memory makes it fail. */
struct sbuf {
	char *s;
	size_t n, cap;
	bool failed;
};

static void sbuf_put(struct sbuf *b, char c)
{
	if (b->failed)
		return;
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		char *s = realloc(b->s, cap);

		if (!s) {
			b->failed = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	b->s[b->n++] = c;
	b->s[b->n] = 0;
}

/* \uXXXX as UTF-8 (a surrogate half is written as it is: only csfcat's own text is read). */
static void sbuf_put_code(struct sbuf *b, unsigned int c)
{
	if (c < 0x80) {
		sbuf_put(b, (char)c);
	} else if (c < 0x800) {
		sbuf_put(b, (char)(0xc0 | c >> 6));
		sbuf_put(b, (char)(0x80 | (c & 0x3f)));
	} else {
		sbuf_put(b, (char)(0xe0 | c >> 12));
		sbuf_put(b, (char)(0x80 | ((c >> 6) & 0x3f)));
		sbuf_put(b, (char)(0x80 | (c & 0x3f)));
	}
}

/* A string; *out (when out is not NULL) gets it decoded, to free(). */
static const char *parse_string(const char *p, char **out)
{
	static const char esc[] = "\"\\/bfnrt", dec[] = "\"\\/\b\f\n\r\t";
	struct sbuf b = { 0 };

	if (*p++ != '"')
		return NULL;
	sbuf_put(&b, 0); /* "" when empty */
	b.n = 0;
	for (; *p && *p != '"'; p++) {
		const char *e;

		if ((unsigned char)*p < 0x20)
			goto fail;
		if (*p != '\\') {
			sbuf_put(&b, *p);
			continue;
		}
		p++;
		if (*p == 'u') {
			for (int i = 1; i <= 4; i++)
				if (!isxdigit((unsigned char)p[i]))
					goto fail;
			sbuf_put_code(&b, (unsigned int)strtoul(
						  (char[]){ p[1], p[2], p[3], p[4], 0 }, NULL, 16));
			p += 4;
		} else if (*p && (e = strchr(esc, *p))) {
			sbuf_put(&b, dec[e - esc]);
		} else {
			goto fail;
		}
	}
	if (*p != '"' || b.failed)
		goto fail;
	if (out)
		*out = b.s;
	else
		free(b.s);
	return p + 1;
fail:
	free(b.s);
	return NULL;
}

static const char *skip_digits(const char *p)
{
	while (isdigit((unsigned char)*p))
		p++;
	return p;
}

static const char *parse_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (isdigit((unsigned char)*p))
		p = skip_digits(p);
	else
		return NULL;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return NULL;
		p = skip_digits(p);
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		p = skip_digits(p);
	}
	return p;
}

/* One more member (or element) in v, zeroed; NULL when out of memory. */
static struct json_value *add_kid(struct json_value *v, size_t *cap, bool keyed)
{
	if (v->n == *cap) {
		size_t n = *cap ? 2 * *cap : 8;
		struct json_value *kids = realloc(v->kids, n * sizeof(*kids));
		char **keys;

		if (!kids)
			return NULL;
		v->kids = kids;
		if (keyed) {
			keys = realloc(v->keys, n * sizeof(*keys));
			if (!keys)
				return NULL;
			v->keys = keys;
		}
		*cap = n;
	}
	memset(&v->kids[v->n], 0, sizeof(v->kids[0]));
	if (keyed)
		v->keys[v->n] = NULL;
	return &v->kids[v->n++];
}

/* The members of an object (keyed) or the elements of an array, p at the opening bracket. */
static const char *parse_members(const char *p, struct json_value *v, int depth, char close)
{
	bool keyed = close == '}';
	size_t cap = 0;

	p = skip_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		struct json_value *kid = NULL;
		char *key = NULL;

		if (keyed) {
			p = parse_string(skip_ws(p), v ? &key : NULL);
			if (!p)
				return NULL;
			p = skip_ws(p);
			if (*p++ != ':') {
				free(key);
				return NULL;
			}
		}
		if (v) {
			kid = add_kid(v, &cap, keyed);
			if (!kid) {
				free(key);
				return NULL;
			}
			if (keyed)
				v->keys[v->n - 1] = key;
		}
		p = parse_value(p, kid, depth + 1);
		if (!p)
			return NULL;
		p = skip_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *parse_literal(const char *p, const char *word)
{
	return strncmp(p, word, strlen(word)) ? NULL : p + strlen(word);
}

static const char *parse_value(const char *p, struct json_value *v, int depth)
{
	struct json_value dummy = { 0 };
	const char *s;

	if (depth > JSON_READ_DEPTH)
		return NULL;
	if (!v)
		v = &dummy; /* only the type is set: nothing to free */
	p = skip_ws(p);
	switch (*p) {
	case '{':
		v->type = JSON_OBJ;
		return parse_members(p, v == &dummy ? NULL : v, depth, '}');
	case '[':
		v->type = JSON_ARR;
		return parse_members(p, v == &dummy ? NULL : v, depth, ']');
	case '"':
		v->type = JSON_STR;
		return parse_string(p, v == &dummy ? NULL : &v->str);
	case 't':
	case 'f':
		v->type = JSON_BOOL;
		v->b = *p == 't';
		return parse_literal(p, v->b ? "true" : "false");
	case 'n':
		v->type = JSON_NULL;
		return parse_literal(p, "null");
	default:
		s = p;
		p = parse_number(p);
		if (!p)
			return NULL;
		v->type = JSON_NUM;
		if (v != &dummy) {
			v->str = strndup(s, (size_t)(p - s));
			if (!v->str)
				return NULL;
		}
		return p;
	}
}

const char *json_parse(const char *text, struct json_value *v)
{
	const char *end;

	if (v)
		memset(v, 0, sizeof(*v));
	end = parse_value(text, v, 0);
	return end ? skip_ws(end) : NULL;
}

void json_value_free(struct json_value *v)
{
	for (size_t i = 0; i < v->n; i++) {
		if (v->keys)
			free(v->keys[i]);
		json_value_free(&v->kids[i]);
	}
	free(v->keys);
	free(v->kids);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

const struct json_value *json_get(const struct json_value *o, const char *key)
{
	if (o->type != JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->kids[i];
	return NULL;
}

void json_get_str(const struct json_value *o, const char *key, char *buf, size_t len)
{
	const struct json_value *v = json_get(o, key);

	if (v && v->type == JSON_STR)
		snprintf(buf, len, "%s", v->str);
}

uint64_t json_get_u64(const struct json_value *o, const char *key)
{
	const struct json_value *v = json_get(o, key);

	return v && v->type == JSON_NUM ? strtoull(v->str, NULL, 10) : 0;
}

bool json_valid_lines(const char *text)
{
	bool any = false;

	for (const char *p = text, *nl; *p; p = *nl ? nl + 1 : nl) {
		const char *end;
		char *line;

		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (nl == p)
			continue;
		line = strndup(p, (size_t)(nl - p));
		if (!line)
			return false;
		end = json_parse(line, NULL);
		any = end && !*end;
		free(line);
		if (!any)
			return false;
	}
	return any;
}

double json_find_number(const char *text, const char *key, bool *found)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(text, pat);
	*found = p && parse_number(p + strlen(pat));
	return *found ? strtod(p + strlen(pat), NULL) : 0;
}
