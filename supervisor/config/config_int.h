/* SPDX-License-Identifier: MIT */
/*
 * Inside the configuration: config.c (loading), keys.c (the keys),
 * values.c (the kinds of values, kinds.def) and parse.c (pure parsers).
 */
#ifndef LG_CONFIG_INT_H
#define LG_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* The kinds of values (kinds.def): K_BOOL, K_UINT, ... */
enum ktype {
#define LG_KIND(NAME, PARSE, STORE, SPELL) K_##NAME,
#include "kinds.def"
#undef LG_KIND
	K_NKINDS
};

struct lg_config_key {
	const char *section, *name;
	enum ktype type;
	size_t off;
	/* a number kind's bounds, in its unit (ms, cents) */
	unsigned long min, max;
	/* the default as the file would spell it (lg_config_init); NULL: 0 */
	const char *def;
};

/* A value as its kind's parser read it, for its store to apply. */
union lg_value {
	bool b;
	int i;
	enum lg_verdict verdict;
	uint64_t n; /* whole numbers: counts, ms, bytes, a mask */
	double d;
	const char *s; /* the text itself: a string store copies it */
	unsigned sizes[LG_OUTPUT_REPEAT_MAX_SIZES];
	struct {
		char program[256]; /* "": any program */
		const char *glob;
	} ignore;
};

/* Where a kind's value goes: the type of its field in struct lg_config. */
struct lg_store {
	/* stores v in field (c's, at the key's offset): 0 or -ENOMEM */
	int (*apply)(struct lg_config *c, void *field, const union lg_value *v);
	void (*free)(void *field); /* what apply allocated (NULL: nothing) */
	/* the field as a whole number of the kind's unit, and back (or NULL) */
	uint64_t (*get)(const void *field);
	void (*set)(void *field, uint64_t n);
	bool appends; /* each line adds one: no key is set twice */
};

struct lg_kind {
	const char *name;
	/* reads s for k into v: 0, or -errno and err says what is wrong */
	int (*parse)(const struct lg_config_key *k, const char *s,
		     union lg_value *v, struct lg_error *err);
	const struct lg_store *store;
	/* a whole number of the kind's unit, as the file spells it (or NULL) */
	void (*spell)(uint64_t n, char *out, size_t size);
};

/* The table of kinds, by enum ktype (values.c, from kinds.def). */
extern const struct lg_kind lg_kinds[K_NKINDS];

static inline const struct lg_store *lg_key_store(const struct lg_config_key *k)
{
	return lg_kinds[k->type].store;
}

extern const struct lg_config_key lg_config_keys[];
extern const size_t lg_config_nkeys;

/* Parses value for k; applies it to c only when apply is set. */
int lg_config_set_value(struct lg_config *c, const struct lg_config_key *k,
			const char *value, bool apply, struct lg_error *err);
/* parse.c: 0, or -EINVAL (bad: the item that is not a name). */
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
