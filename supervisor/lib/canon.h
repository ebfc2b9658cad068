/* SPDX-License-Identifier: MIT */
/*
 * Canonical JSON for tool-call arguments, so that two calls with the same
 * arguments compare equal however the agent spelled them. Supervisor side
 * only (jansson); the digest and previews it is used with are in text.h.
 */
#ifndef LG_CANON_H
#define LG_CANON_H

#include <stdbool.h>
#include <stddef.h>

/* String values longer than this many code points are cut to it. */
#define LG_CANON_MAX_STRING 200

/*
 * Writes the canonical form of the JSON value in json[0..len) to out, NUL
 * terminated: object keys sorted (bytewise, i.e. by code point) at every
 * level, compact separators, non-ASCII text as UTF-8, string values (not
 * keys) longer than LG_CANON_MAX_STRING code points cut to that many,
 * numbers as jansson writes them (an integer too big for 64 bits is read,
 * with every number of that value, as a double). For a duplicated key the
 * last value wins. Returns the length written, -EINVAL when the input is
 * not one JSON value (or has a NUL in an object key), -ENOSPC when out
 * cannot hold the result and its NUL, -ENOMEM.
 */
int lg_canon_args(const char *json, size_t len, char *out, size_t size);

/*
 * The arguments that make a tool call's signature for the repeat detector:
 * lg_canon_args' form, less the keys a model rewrites on every call
 * without changing what the call does (ignore: "TOOLGLOB:KEY, ...", e.g.
 * "Bash:description"; top-level keys of an object), and with the noise
 * taken out of every string: runs of white space become one space (none at
 * the ends), and a shell command's comment ("ls dir # again") is dropped
 * (keys command, cmd and script, arrays under them included). Same returns
 * as lg_canon_args.
 */
int lg_canon_call(const char *tool, const char *json, size_t len,
		  const char *ignore, char *out, size_t size);

/* The free-text keys left out by default (docs/rules.md, "What counts as the same call"). */
#define LG_DEFAULT_IGNORE_KEYS                                         \
	"Bash:description, BashOutput:description, Task:description, " \
	"run_shell_command:description, shell:justification, "         \
	"shell_command:justification, exec_command:justification, "    \
	"*:justification, *:explanation, *:rationale, *:reasoning"

/* False, with the bad rule in bad, if rules is not "TOOLGLOB:KEY, ...". */
bool lg_canon_ignore_valid(const char *rules, char *bad, size_t size);

/*
 * The target of a destructive tool call: for the first key of keys (a
 * comma- or space-separated list, e.g. "asset_id, schema, table") that the
 * JSON object json[0..len) holds with a string or number value, writes
 * "key=value" to out. Returns its length, or 0 when none applies (not an
 * object, no such key), or -ENOSPC.
 */
int lg_canon_target(const char *json, size_t len, const char *keys, char *out,
		    size_t size);

/*
 * What a tool call runs, for a person to read (lgctl report and replay):
 * the shell command in its arguments json[0..len), the string under the
 * key "command", "cmd" or "script" of an object; of an argv array there,
 * the script of "sh -c SCRIPT" (any -c flag: -lc, -ec), else its words
 * joined by spaces. Written to out, NUL terminated, cut at a whole UTF-8
 * character when it does not fit. Returns its length, or 0 when the
 * arguments hold no command (another tool's, or not JSON: a recording cuts
 * them at 4 KB): show them as they are.
 */
int lg_canon_command(const char *json, size_t len, char *out, size_t size);

/*
 * Matches a URL path against templates ("/assets/{asset_id}, /t/{table}"):
 * the first whose literal segments match and whose {name} segments capture
 * one segment each gives "name=value" (the last capture). The query string
 * is ignored. Returns the length, 0 when no template matches, -ENOSPC.
 */
int lg_url_target(const char *url, const char *templates, char *out,
		  size_t size);

#endif
