/* SPDX-License-Identifier: MIT */
/* Inside the configuration: config.c (loading) and config_keys.c (the keys). */
#ifndef LG_CONFIG_INT_H
#define LG_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

enum ktype {
	K_BOOL,
	K_UINT,
	K_ULONG,
	K_U64,
	K_DURATION,
	K_DURATION_U64,
	K_ACTION,
	K_ERRNO,
	K_FRACTION,
	K_MONEY,
	K_STRING,
	K_SYSCALLS,
	K_SIZES,
	K_IGNORE_PATH,
	K_IGNORE_PROGRAM,
	K_BPF_MODE,
	K_POW2, /* unsigned, a power of two from min to max */
	K_STORE_BACKEND,
	K_STORE_ERROR,
	K_STORE_URL,
	K_ENDPOINTS, /* [shim] tool_endpoints */
	K_IGNORE_KEYS, /* [repeat] ignore_keys */
	K_LLM_MODE, /* [llm] mode */
	K_PRICES, /* [llm] prices */
	K_LLM_VARIABLES, /* [llm] variables */
	K_LLM_DECRYPT, /* [llm] decrypt */
	K_EGRESS, /* [network] egress */
	K_ON_FULL, /* [quarantine] on_full: allow or deny */
	K_BYTES, /* a size: 1024, 512K, 100M, 2G (powers of 1024) */
	K_DIRS, /* absolute directories, comma-separated */
};

struct key {
	const char *section, *name;
	enum ktype type;
	size_t off;
	unsigned long min, max;
	/* the default as the file would spell it (lg_config_init); NULL: 0 */
	const char *def;
};

/* Kinds kept as a string the config owns (freed by lg_config_free). */
static inline bool lg_key_is_string(enum ktype t)
{
	return t == K_STRING || t == K_STORE_URL || t == K_ENDPOINTS ||
	       t == K_IGNORE_KEYS || t == K_PRICES || t == K_LLM_VARIABLES ||
	       t == K_LLM_DECRYPT || t == K_DIRS;
}

extern const struct key lg_config_keys[];
extern const size_t lg_config_nkeys;

/* Parses value for k; applies it to c only when apply is set. */
int lg_config_set_value(struct lg_config *c, const struct key *k,
			const char *value, bool apply, char *msg, size_t msgsz);
/* config_parse.c: 0, or -EINVAL (bad: the item that is not a name). */
int lg_parse_bool(const char *s, bool *out);
int lg_parse_syscalls(const char *s, unsigned *out, char *bad, size_t badsz);
/*
 * "50, 80, 120": 1 to LG_OUTPUT_REPEAT_MAX_SIZES whole numbers from min to
 * max, kept ascending without duplicates, the rest of out zeroed. On error
 * bad holds the offending item and the return says what is wrong.
 */
int lg_parse_sizes(const char *s, unsigned out[LG_OUTPUT_REPEAT_MAX_SIZES],
		   unsigned long min, unsigned long max, char *bad,
		   size_t badsz);
/* An [ignore] rule (program NULL: any program). */
int lg_config_add_ignore(struct lg_config *c, const char *program,
			 const char *glob);

#endif
