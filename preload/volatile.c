// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "volatile.h"

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool hex(char c)
{
	return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool alnum(char c)
{
	return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* n digits at p[i..]: i + n, else 0 */
static size_t digits(const char *p, size_t n, size_t i, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (i + j >= n || !digit(p[i + j]))
			return 0;
	return i + k;
}

/* HH:MM:SS(.frac) at i: its end, else 0 (HH may be one digit) */
static size_t clock_at(const char *p, size_t n, size_t i)
{
	size_t j = i;

	if (j < n && digit(p[j]))
		j++;
	else
		return 0;
	if (j < n && digit(p[j]))
		j++;
	if (j >= n || p[j] != ':' || !(j = digits(p, n, j + 1, 2)))
		return 0;
	if (j >= n || p[j] != ':' || !(j = digits(p, n, j + 1, 2)))
		return 0;
	if (j + 1 < n && (p[j] == '.' || p[j] == ',') && digit(p[j + 1]))
		for (j++; j < n && digit(p[j]); j++)
			;
	return j;
}

/* YYYY-MM-DD[T ]HH:MM[:SS[.frac]][Z|+HH[:]MM] */
static size_t datetime_at(const char *p, size_t n, size_t i)
{
	size_t j = digits(p, n, i, 4), t;

	if (!j || j >= n || p[j] != '-' || !(j = digits(p, n, j + 1, 2)) ||
	    j >= n || p[j] != '-' || !(j = digits(p, n, j + 1, 2)) || j >= n ||
	    (p[j] != 'T' && p[j] != ' '))
		return 0;
	t = clock_at(p, n, j + 1);
	if (!t) { /* HH:MM */
		t = digits(p, n, j + 1, 2);
		if (!t || t >= n || p[t] != ':' ||
		    !(t = digits(p, n, t + 1, 2)))
			return 0;
	}
	j = t;
	if (j < n && p[j] == 'Z')
		return j + 1;
	if (j < n && (p[j] == '+' || p[j] == '-') && digits(p, n, j + 1, 2)) {
		t = j + 3;
		if (t < n && p[t] == ':')
			t++;
		if (digits(p, n, t, 2))
			return t + 2;
	}
	return j;
}

static size_t uuid_at(const char *p, size_t n, size_t i)
{
	static const unsigned groups[] = { 8, 4, 4, 4, 12 };
	size_t j = i;

	for (unsigned g = 0; g < 5; g++) {
		for (unsigned k = 0; k < groups[g]; k++, j++)
			if (j >= n || !hex(p[j]))
				return 0;
		if (g < 4 && (j >= n || p[j++] != '-'))
			return 0;
	}
	return j < n && alnum(p[j]) ? 0 : j;
}

static size_t addr_at(const char *p, size_t n, size_t i)
{
	size_t j = i + 2;

	if (i + 2 >= n || p[i] != '0' || (p[i + 1] != 'x' && p[i + 1] != 'X'))
		return 0;
	while (j < n && hex(p[j]))
		j++;
	return j - i - 2 >= 6 && !(j < n && alnum(p[j])) ? j : 0;
}

static const char *const units[] = {
	"milliseconds", "millisecond", "seconds",   "second", "secs", "sec",
	"ms",		"us",	       "\xc2\xb5s", "ns",     "s"
};

/* after a number: " ms", "s", ... then no letter */
static size_t unit_at(const char *p, size_t n, size_t j)
{
	size_t k = j < n && p[j] == ' ' ? j + 1 : j;

	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		size_t l = strlen(units[u]);

		if (k + l <= n && memcmp(p + k, units[u], l) == 0 &&
		    !(k + l < n && alnum(p[k + l])))
			return k + l;
	}
	return 0;
}

/* 12, 0.53, 1,234 */
static size_t number_at(const char *p, size_t n, size_t i)
{
	size_t j = i;

	if (j >= n || !digit(p[j]))
		return 0;
	while (j < n && (digit(p[j]) || ((p[j] == '.' || p[j] == ',') &&
					 j + 1 < n && digit(p[j + 1]))))
		j++;
	return j;
}

static size_t duration_at(const char *p, size_t n, size_t i)
{
	size_t j;

	if (i == 0 || (p[i - 1] != ' ' && p[i - 1] != '('))
		return 0;
	j = number_at(p, n, i);
	return j ? unit_at(p, n, j) : 0;
}

struct key {
	const char *name;
	bool id; /* an id of letters and digits, else numbers */
	bool space; /* the value may follow after a space alone */
};

static const struct key keys[] = {
	{ "process group", false, false }, { "wall time", false, false },
	{ "wall_time", false, false },	   { "request id", true, false },
	{ "request_id", true, false },	   { "requestid", true, false },
	{ "trace_id", true, false },	   { "traceid", true, false },
	{ "chunk id", true, false },	   { "session id", true, true },
	{ "timestamp", false, false },	   { "duration", false, false },
	{ "elapsed", false, false },	   { "latency", false, false },
	{ "pgid", false, false },	   { "ppid", false, false },
	{ "pids", false, false },	   { "took", false, true },
	{ "pid", false, false },	   { "tid", false, false },
};

/* key, then the start of its value (0: none) */
static size_t keyed_at(const char *p, size_t n, size_t i, bool *id)
{
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		size_t l = strlen(keys[k].name), j = i + l;
		bool sep = false;

		if (j > n || strncasecmp(p + i, keys[k].name, l) != 0)
			continue;
		/* "process group pgid:" - the longest key and what follows */
		if (!keys[k].space)
			while (j < n && (alnum(p[j]) || p[j] == '_'))
				j++;
		if (j < n && p[j] == '"')
			j++;
		while (j < n && p[j] == ' ')
			j++;
		if (j < n && (p[j] == ':' || p[j] == '=')) {
			sep = true;
			j++;
		}
		if (!sep && !keys[k].space)
			continue;
		while (j < n && (p[j] == ' ' || p[j] == '"'))
			j++;
		*id = keys[k].id;
		return j;
	}
	return 0;
}

static size_t keyed_value(const char *p, size_t n, size_t j, bool id)
{
	size_t e = j, u;

	if (id) {
		while (e < n && (alnum(p[e]) || p[e] == '-' || p[e] == '_'))
			e++;
		return e > j ? e : 0;
	}
	for (;;) {
		size_t v = number_at(p, n, e);

		if (!v)
			return e > j ? e : 0;
		e = v;
		u = unit_at(p, n, e);
		if (u)
			e = u;
		/* "PIDs: 12, 13" */
		if (e + 2 < n && p[e] == ',' && p[e + 1] == ' ' &&
		    digit(p[e + 2]))
			e += 2;
		else
			return e;
	}
}

static size_t tmpname_at(const char *p, size_t n, size_t i)
{
	static const char *const dirs[] = { "/tmp/", "/var/tmp/" };

	for (size_t d = 0; d < 2; d++) {
		size_t l = strlen(dirs[d]), b, e, s, k;
		bool mixed = false;

		if (i + l > n || memcmp(p + i, dirs[d], l) != 0)
			continue;
		b = i + l;
		for (e = b; e < n && (alnum(p[e]) || p[e] == '.' ||
				      p[e] == '-' || p[e] == '_');
		     e++)
			;
		/* the tail after the last separator, or all after "tmp" */
		for (s = e; s > b && alnum(p[s - 1]); s--)
			;
		if ((s == b || e - s < 6) && e - b >= 9 &&
		    memcmp(p + b, "tmp", 3) == 0)
			s = b + 3;
		if (s == b || e - s < 6)
			continue;
		for (k = s; k < e; k++)
			mixed |= digit(p[k]) || (p[k] >= 'A' && p[k] <= 'Z');
		if (mixed)
			return e;
	}
	return 0;
}

void lg_volatile_scan(const char *p, size_t n,
		      void (*emit)(void *ctx, const char *s, size_t k),
		      void *ctx)
{
	size_t raw = 0, i = 0;

	while (i < n) {
		const char *ph = NULL;
		size_t e = 0, start = i;
		char c = p[i];
		bool id;

		/* a token starts after a character that is not a letter or digit */
		if (i && alnum(p[i - 1]) && c != '/') {
			i++;
			continue;
		}
		if (digit(c)) {
			if ((e = datetime_at(p, n, i)) ||
			    (e = clock_at(p, n, i)))
				ph = "<time>";
			else if ((e = uuid_at(p, n, i)))
				ph = "<uuid>";
			else if ((e = addr_at(p, n, i)))
				ph = "<addr>";
			else if ((e = duration_at(p, n, i)))
				ph = "<n>";
		} else if (c == '/') {
			if ((e = tmpname_at(p, n, i)))
				ph = "<tmp>";
		} else if (hex(c) && (e = uuid_at(p, n, i))) {
			ph = "<uuid>";
		} else if (alnum(c)) {
			size_t v = keyed_at(p, n, i, &id);

			if (v && (e = keyed_value(p, n, v, id))) {
				start = v; /* the key stays */
				ph = id ? "<id>" : "<n>";
			}
		}
		if (!ph || (e < n && alnum(p[e]) && c != '/')) {
			i++;
			continue;
		}
		if (start > raw)
			emit(ctx, p + raw, start - raw);
		emit(ctx, ph, strlen(ph));
		raw = i = e;
	}
	if (n > raw)
		emit(ctx, p + raw, n - raw);
}

struct sink {
	char *out;
	size_t size, len;
};

static void to_buf(void *ctx, const char *s, size_t k)
{
	struct sink *b = ctx;
	size_t room = b->size ? b->size - 1 - b->len : 0;

	if (k > room)
		k = room;
	memcpy(b->out + b->len, s, k);
	b->len += k;
}

size_t lg_volatile_mask(const char *p, size_t n, char *out, size_t size)
{
	struct sink b = { out, size, 0 };

	if (!size)
		return 0;
	lg_volatile_scan(p, n, to_buf, &b);
	out[b.len] = '\0';
	return b.len;
}
