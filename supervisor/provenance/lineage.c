// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineage.h"

#define DEFAULT_MAX (1u << 18) /* kept half full: 16 MiB of slots at most */
#define MOVES 64
#define DIRMOVES_MAX 4096
#define VACATED 1024

struct slot {
	struct lg_inode_key key;
	unsigned flags; /* 0: empty (a slot whose flags all clear stays used) */
	bool used;
	char *origin; /* its name before the session, once it had another */
};

/* A pre-existing directory renamed: what lies below dst was below src. */
struct dirmove {
	char *src, *dst;
};

struct move {
	char *src, *dst;
	uint64_t t_ms;
};

struct lg_lineage {
	struct slot *slots;
	size_t cap, len, max;
	uint64_t dropped;
	struct move moves[MOVES];
	size_t next_move, nmoves; /* nmoves: ever recorded */
	struct dirmove *dirmoves; /* oldest first */
	size_t ndirmoves, capdirmoves;
	uint64_t vacated[VACATED]; /* path hashes, 0: free */
	size_t next_vacated, nvacated;
};

struct lg_lineage *lg_lineage_new(size_t max_inodes)
{
	struct lg_lineage *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->max = max_inodes ? max_inodes : DEFAULT_MAX;
	return l;
}

void lg_lineage_free(struct lg_lineage *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < MOVES; i++) {
		free(l->moves[i].src);
		free(l->moves[i].dst);
	}
	for (size_t i = 0; i < l->ndirmoves; i++) {
		free(l->dirmoves[i].src);
		free(l->dirmoves[i].dst);
	}
	free(l->dirmoves);
	for (size_t i = 0; i < l->cap; i++)
		free(l->slots[i].origin);
	free(l->slots);
	free(l);
}

static uint64_t hash(const struct lg_inode_key *k)
{
	uint64_t h = k->ino * 0x9e3779b97f4a7c15ULL;

	h ^= (k->dev + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;
	h ^= (uint64_t)k->btime_ns * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static bool same(const struct lg_inode_key *a, const struct lg_inode_key *b)
{
	return a->ino == b->ino && a->dev == b->dev &&
	       a->btime_ns == b->btime_ns;
}

/* The slot holding key, or the empty one where it would go (cap > 0). */
static struct slot *find(const struct lg_lineage *l,
			 const struct lg_inode_key *key)
{
	size_t i = hash(key) & (l->cap - 1);

	while (l->slots[i].used && !same(&l->slots[i].key, key))
		i = (i + 1) & (l->cap - 1);
	return &l->slots[i];
}

unsigned lg_lineage_get(const struct lg_lineage *l,
			const struct lg_inode_key *key)
{
	if (!l->cap)
		return 0;
	return find(l, key)->flags;
}

static int grow(struct lg_lineage *l)
{
	size_t cap = l->cap ? l->cap * 2 : 256;
	struct slot *old = l->slots;
	size_t ocap = l->cap;

	l->slots = calloc(cap, sizeof(*l->slots));
	if (!l->slots) {
		l->slots = old;
		return -ENOMEM;
	}
	l->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			*find(l, &old[i].key) = old[i];
	free(old);
	return 0;
}

int lg_lineage_mark(struct lg_lineage *l, const struct lg_inode_key *key,
		    unsigned set, unsigned clear)
{
	struct slot *s;

	if (l->cap) {
		s = find(l, key);
		if (s->used) {
			s->flags = (s->flags | set) & ~clear;
			return 0;
		}
	}
	if (!set)
		return 0;
	/* Kept at most half full: probes stay short. */
	if (l->len >= l->max || ((l->len + 1) * 2 > l->cap && grow(l) < 0)) {
		l->dropped++;
		return -ENOSPC;
	}
	s = find(l, key);
	s->key = *key;
	s->flags = set & ~clear;
	s->used = true;
	l->len++;
	return 0;
}

uint64_t lg_lineage_dropped(const struct lg_lineage *l)
{
	return l->dropped;
}

void lg_lineage_move(struct lg_lineage *l, const char *src, const char *dst,
		     uint64_t now_ms)
{
	struct move *m = &l->moves[l->next_move];
	char *s = strdup(src), *d = strdup(dst);

	if (!s || !d) {
		free(s);
		free(d);
		l->dropped++;
		return;
	}
	free(m->src);
	free(m->dst);
	*m = (struct move){ s, d, now_ms };
	l->next_move = (l->next_move + 1) % MOVES;
	l->nmoves++;
}

/* path, when it is from or below it, as below to, into out: 1, 0, < 0. */
static int rebase(const char *path, const char *from, const char *to, char *out,
		  size_t size)
{
	size_t n = strlen(from);

	if (strncmp(path, from, n) != 0 || (path[n] && path[n] != '/'))
		return 0;
	if ((size_t)snprintf(out, size, "%s%s", to, path + n) >= size)
		return -ENAMETOOLONG;
	return 1;
}

int lg_lineage_moved_to(struct lg_lineage *l, const char *path, uint64_t now_ms,
			uint64_t max_age_ms, char *out, size_t size)
{
	if (!l->nmoves) /* every removal asks: most sessions move nothing */
		return 0;
	/* Newest first: a path moved twice went where it went last. */
	for (size_t k = 0; k < MOVES; k++) {
		struct move *m =
			&l->moves[(l->next_move + MOVES - 1 - k) % MOVES];
		int r;

		if (!m->src)
			continue;
		if (now_ms - m->t_ms > max_age_ms) {
			free(m->src);
			free(m->dst);
			*m = (struct move){ 0 };
			continue;
		}
		r = rebase(path, m->src, m->dst, out, size);
		if (r)
			return r;
	}
	return 0;
}

void lg_lineage_set_origin(struct lg_lineage *l, const struct lg_inode_key *key,
			   const char *path)
{
	struct slot *sl;

	if (!l->cap || !(sl = find(l, key))->used || sl->origin)
		return; /* unknown, or its first name is known: the one before */
	sl->origin = strdup(path);
	if (!sl->origin)
		l->dropped++;
}

const char *lg_lineage_origin(const struct lg_lineage *l,
			      const struct lg_inode_key *key)
{
	const struct slot *sl;

	if (!l->cap)
		return NULL;
	sl = find(l, key);
	return sl->used ? sl->origin : NULL;
}

/* path's name before the directory renames, into out: 1, 0 or < 0. */
static int under_moved(const struct lg_lineage *l, const char *path, char *out,
		       size_t size)
{
	/* Newest first: a directory moved twice was where it came from last. */
	for (size_t k = l->ndirmoves; k-- > 0;) {
		int r = rebase(path, l->dirmoves[k].dst, l->dirmoves[k].src,
			       out, size);

		if (r)
			return r;
	}
	return 0;
}

int lg_lineage_dir_moved(struct lg_lineage *l, const char *src, const char *dst)
{
	struct dirmove m;

	if (strcmp(src, dst) == 0)
		return 0;
	if (l->ndirmoves == DIRMOVES_MAX) {
		l->dropped++;
		return -ENOSPC;
	}
	if (l->ndirmoves == l->capdirmoves) {
		size_t cap = l->capdirmoves ? l->capdirmoves * 2 : 16;
		struct dirmove *d = realloc(l->dirmoves, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		l->dirmoves = d;
		l->capdirmoves = cap;
	}
	m.src = strdup(src);
	m.dst = strdup(dst);
	if (!m.src || !m.dst) {
		free(m.src);
		free(m.dst);
		return -ENOMEM;
	}
	l->dirmoves[l->ndirmoves++] = m;
	return 0;
}

int lg_lineage_name_before(const struct lg_lineage *l,
			   const struct lg_inode_key *key, const char *path,
			   char *out, size_t size)
{
	const char *o = key ? lg_lineage_origin(l, key) : NULL;
	int r;

	if (o) {
		if (strcmp(o, path) == 0)
			return 0;
		if ((size_t)snprintf(out, size, "%s", o) >= size)
			return -ENAMETOOLONG;
		return 1;
	}
	if (!l->ndirmoves) /* the common case: no directory renamed */
		return 0;
	r = under_moved(l, path, out, size);
	return r > 0 && strcmp(out, path) == 0 ? 0 : r;
}

static uint64_t path_hash(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h ? h : 1;
}

void lg_lineage_vacate(struct lg_lineage *l, const char *path)
{
	uint64_t h = path_hash(path);

	for (size_t i = 0; i < VACATED; i++)
		if (l->vacated[i] == h)
			return;
	if (!l->vacated[l->next_vacated])
		l->nvacated++;
	l->vacated[l->next_vacated] = h;
	l->next_vacated = (l->next_vacated + 1) % VACATED;
}

bool lg_lineage_refill(struct lg_lineage *l, const char *path)
{
	uint64_t h;

	if (!l->nvacated) /* the common rename asks nothing more */
		return false;
	h = path_hash(path);
	for (size_t i = 0; i < VACATED; i++)
		if (l->vacated[i] == h) {
			l->vacated[i] = 0;
			l->nvacated--;
			return true;
		}
	return false;
}
