/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON for csfcat's --json forms: json.c writes them, json_read.c reads them back (csfcat
 * fpu-report --compare, and the tests, which check what csfcat writes).
 */
#ifndef CSF_TOOLS_JSON_H
#define CSF_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A streaming JSON writer: nesting is tracked so that commas fall where they must. key is NULL
 * inside arrays and at the top level. Output goes to stdout; strings are escaped.
 */
void json_begin(const char *key); /* { */
void json_end(void); /* } */
void json_begin_array(const char *key); /* [ */
void json_end_array(void); /* ] */
void json_u64(const char *key, uint64_t v);
void json_i64(const char *key, int64_t v);
void json_double(const char *key, double v, int decimals);
void json_str(const char *key, const char *s);
void json_bool(const char *key, bool v);
void json_null(const char *key);
/* End a top-level value with a newline and flush, so that followers of a stream see it. */
void json_flush(void);

/* A value read (RFC 8259 syntax), with its members or elements. */
struct json_value {
	enum { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } type;
	char *str; /* JSON_STR: decoded; JSON_NUM: its text */
	bool b;
	size_t n;
	char **keys; /* JSON_OBJ */
	struct json_value *kids; /* JSON_ARR, JSON_OBJ */
};

/*
 * Read one value from text, whitespace around it allowed: where it ends, or NULL when it is not
 * JSON. v may be NULL (only check); else free it with json_value_free(), whatever the result.
 */
const char *json_parse(const char *text, struct json_value *v);
void json_value_free(struct json_value *v);
/* Member key of object o, or NULL. */
const struct json_value *json_get(const struct json_value *o, const char *key);
/* Member key as a string into buf, when it is one (buf is left alone otherwise). */
void json_get_str(const struct json_value *o, const char *key, char *buf, size_t len);
/* Member key as an unsigned integer; 0 when it is not a number. */
uint64_t json_get_u64(const struct json_value *o, const char *key);

/* Whether each non-empty line of text is one JSON value (and there is one at least). */
bool json_valid_lines(const char *text);
/* The number of the first member "key" anywhere in text; *found says whether there was one. */
double json_find_number(const char *text, const char *key, bool *found);

#endif /* CSF_TOOLS_JSON_H */
