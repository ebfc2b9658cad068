/* SPDX-License-Identifier: MIT */
/*
 * The JSON lgrun writes (audit records, the state file, recordings) and
 * the one reader it needs for its own flat lines.
 */
#ifndef LG_JSON_H
#define LG_JSON_H

#include <stdbool.h>
#include <stddef.h>

/* A growing JSON object builder; on allocation failure it stops growing. */
struct lg_json {
	char *buf;
	size_t len, cap;
	bool first;
};

void lg_json_begin(struct lg_json *j);
void lg_json_str(struct lg_json *j, const char *key, const char *val);
void lg_json_int(struct lg_json *j, const char *key, long long val);
void lg_json_num(struct lg_json *j, const char *key, double val);
void lg_json_bool(struct lg_json *j, const char *key, bool val);
/* val must already be valid JSON */
void lg_json_raw(struct lg_json *j, const char *key, const char *val);
/* Closes the object and returns the text (owned by j). */
const char *lg_json_end(struct lg_json *j);
void lg_json_free(struct lg_json *j);
/* Appends s as a JSON string literal, quotes included. */
void lg_json_quote(struct lg_json *j, const char *s);
void lg_json_append(struct lg_json *j, const char *s, size_t n);

/*
 * Copies the value of "key" from a flat one-line JSON object (string
 * unescaped, other values as written); "" when absent.
 */
void lg_json_field(const char *json, const char *key, char *out, size_t size);

#endif
