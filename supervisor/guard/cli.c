// SPDX-License-Identifier: MIT
/*
 * Command lines that destroy data off this host (cli.h): the table's
 * patterns (cli.def says their language) matched against an exec's
 * arguments, and what each destroys.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "../../preload/sql.h"

enum cli_target { T_REST, T_NEXT, T_URL, T_CWD, T_SQL, T_LAST, T_REDIS, T_OPT };

struct cli_rule {
	char program[64];
	char pattern[256];
	enum cli_target target;
	bool makes; /* "+TARGET": what it names is made, not destroyed */
	char opt[32]; /* opt=NAME */
};

struct lg_cli_table {
	size_t n;
	struct cli_rule *r;
};

static const struct {
	const char *program, *pattern, *target;
} shipped[] = {
#define LG_CLI(p, pat, t) { p, pat, t },
#include "cli.def"
#undef LG_CLI
};

static int target_of(const char *s, struct cli_rule *r)
{
	static const char *const names[] = { "rest", "next", "url",  "cwd",
					     "sql",  "last", "redis" };

	r->makes = s[0] == '+';
	s += r->makes;
	if (strncmp(s, "opt=", 4) == 0 && s[4] == '-' &&
	    strlen(s + 4) < sizeof(r->opt)) {
		strcpy(r->opt, s + 4);
		r->target = T_OPT;
		return 0;
	}
	for (int i = 0; i < 7; i++)
		if (strcmp(s, names[i]) == 0) {
			r->target = (enum cli_target)i;
			return 0;
		}
	return -1;
}

static int add(struct lg_cli_table *t, const char *program, const char *pattern,
	       const char *target)
{
	struct cli_rule *r = realloc(t->r, (t->n + 1) * sizeof(*r));

	if (!r)
		return -1;
	t->r = r;
	r += t->n;
	memset(r, 0, sizeof(*r));
	if (strlen(program) >= sizeof(r->program) ||
	    strlen(pattern) >= sizeof(r->pattern) || target_of(target, r) < 0)
		return -1;
	strcpy(r->program, program);
	strcpy(r->pattern, pattern);
	t->n++;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* "PROGRAM PATTERN -> TARGET" (the target "rest" when left out). */
static int add_line(struct lg_cli_table *t, char *line)
{
	char *arrow = strstr(line, "->"), *prog, *pat;
	const char *target = "rest";

	if (arrow) {
		*arrow = '\0';
		target = trim(arrow + 2);
	}
	prog = trim(line);
	if (!*prog)
		return arrow ? -1 : 0;
	pat = prog + strcspn(prog, " \t");
	if (*pat)
		*pat++ = '\0';
	return add(t, prog, trim(pat), target);
}

struct lg_cli_table *lg_cli_table_new(const char *extra, struct lg_error *err)
{
	struct lg_cli_table *t = calloc(1, sizeof(*t));
	char *copy, *line, *save = NULL;

	if (!t)
		return NULL;
	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++)
		if (add(t, shipped[i].program, shipped[i].pattern,
			shipped[i].target) < 0)
			goto fail;
	if (!extra || !*extra)
		return t;
	copy = strdup(extra);
	if (!copy)
		goto fail;
	for (line = strtok_r(copy, ";\n", &save); line;
	     line = strtok_r(NULL, ";\n", &save)) {
		char shown[128];

		snprintf(shown, sizeof(shown), "%s", line);
		if (add_line(t, line) < 0) {
			lg_error_set(
				err, EINVAL,
				"[remote] commands: cannot read '%s': write PROGRAM PATTERN -> [+]rest|next|last|url|cwd|sql|opt=--NAME",
				trim(shown));
			free(copy);
			goto fail;
		}
	}
	free(copy);
	return t;
fail:
	lg_cli_table_free(t);
	return NULL;
}

void lg_cli_table_free(struct lg_cli_table *t)
{
	if (!t)
		return;
	free(t->r);
	free(t);
}

bool lg_cli_known(const struct lg_cli_table *t, const char *program)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (strcmp(t->r[i].program, program) == 0)
			return true;
	return false;
}

static bool is_option(const char *a)
{
	return a[0] == '-' && a[1] != '\0';
}

/*
 * Does one of the alternatives ("rm|rmi", "-X DELETE|--request=DELETE",
 * globs, case aside) match at an argument j, from <= j < to? One of two
 * words needs them in a row.
 */
static bool alternatives(const char *alts, size_t n, int argc,
			 const char *const *argv, int from, int to)
{
	char buf[256];
	char *save = NULL, *w;

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, alts, n);
	buf[n] = '\0';
	for (w = strtok_r(buf, "|", &save); w; w = strtok_r(NULL, "|", &save)) {
		char *sp = strchr(w, ' ');

		if (sp)
			*sp++ = '\0';
		for (int j = from; j < to && j < argc; j++) {
			if (fnmatch(w, argv[j], FNM_CASEFOLD) != 0)
				continue;
			if (!sp || (j + 1 < argc && fnmatch(sp, argv[j + 1],
							    FNM_CASEFOLD) == 0))
				return true;
		}
	}
	return false;
}

/*
 * Matches pattern against argv[1..argc): the index of the first argument
 * after what it matched, or -1. verb gets the positional words matched.
 */
static int match(const char *pattern, int argc, const char *const *argv,
		 char *verb, size_t vsize)
{
	const char *p = pattern;
	int i = 1;
	bool any = false;
	size_t vn = strlen(verb);

	while (*p) {
		const char *e;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p == '{') {
			e = strchr(p, '}');
			/* "{A|B C}": anywhere from argument i on */
			if (!e || !alternatives(p + 1, (size_t)(e - p - 1),
						argc, argv, i, argc))
				return -1;
			p = e + 1;
			continue;
		}
		e = p + strcspn(p, " ");
		if (e - p == 2 && p[0] == '*' && p[1] == '*') {
			any = true;
			p = e;
			continue;
		}
		for (bool value_ok = false;; i++) {
			if (i >= argc)
				return -1;
			if (is_option(argv[i])) {
				value_ok = !strchr(argv[i], '=');
				continue;
			}
			if (alternatives(p, (size_t)(e - p), argc, argv, i,
					 i + 1))
				break;
			if (!any && !value_ok)
				return -1;
			if (any && vn < vsize) /* gcloud compute instances */
				vn += (size_t)snprintf(verb + vn, vsize - vn,
						       " %s", argv[i]);
			value_ok = false;
		}
		if (vn < vsize)
			vn += (size_t)snprintf(verb + vn, vsize - vn, " %s",
					       argv[i]);
		i++;
		any = false;
		p = e;
	}
	return i;
}

static bool dry_run(int argc, const char *const *argv)
{
	/* not -h: psql's, mysql's and redis-cli's host */
	static const char *const words[] = { "--dry-run", "--dryrun", "--help",
					     "--what-if", "--whatif", NULL };

	for (int i = 1; i < argc; i++)
		for (int k = 0; words[k]; k++) {
			size_t n = strlen(words[k]);

			if (strncmp(argv[i], words[k], n) == 0 &&
			    (argv[i][n] == '\0' ||
			     (argv[i][n] == '=' && n > 2)))
				return true;
		}
	return false;
}

static void add_target(struct lg_cli_match *m, bool made, const char *a,
		       const char *sep, const char *b)
{
	char t[LG_CLI_TARGET_MAX];

	if (m->n == LG_CLI_TARGETS)
		return;
	/* a may be m->verb */
	snprintf(t, sizeof(t), "%s%s%s", a, sep, b);
	m->made[m->n] = made;
	memcpy(m->targets[m->n++], t, sizeof(t));
}

/* The positional arguments from i on, joined by spaces. */
static void rest_of(int argc, const char *const *argv, int i, char *out,
		    size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (; i < argc && n < size; i++) {
		if (is_option(argv[i]))
			continue;
		n += (size_t)snprintf(out + n, size - n, "%s%s", n ? " " : "",
				      argv[i]);
	}
}

/* An option's value: "-c X", "-cX", "--command X", "--command=X". */
static const char *option(int argc, const char *const *argv, const char *s,
			  const char *l, int *at)
{
	for (int i = 1; i < argc; i++) {
		size_t ln = l ? strlen(l) : 0;

		if (s && strcmp(argv[i], s) == 0 && i + 1 < argc) {
			*at = i + 1;
			return argv[i + 1];
		}
		if (s && strncmp(argv[i], s, 2) == 0 && argv[i][2] &&
		    s[1] != '-') {
			*at = i;
			return argv[i] + 2;
		}
		/* a cluster of short flags ending in it: psql -qc X */
		if (s && argv[i][0] == '-' && argv[i][1] != '-' &&
		    strlen(argv[i]) > 2 &&
		    argv[i][strlen(argv[i]) - 1] == s[1] && i + 1 < argc) {
			bool flags = true;

			for (const char *c = argv[i] + 1; *c; c++)
				flags &= (*c >= 'a' && *c <= 'z') ||
					 (*c >= 'A' && *c <= 'Z');
			if (flags) {
				*at = i + 1;
				return argv[i + 1];
			}
		}
		if (l && strncmp(argv[i], l, ln) == 0) {
			if (argv[i][ln] == '=') {
				*at = i;
				return argv[i] + ln + 1;
			}
			if (!argv[i][ln] && i + 1 < argc) {
				*at = i + 1;
				return argv[i + 1];
			}
		}
	}
	*at = -1;
	return NULL;
}

/* "h:p/db" of an SQL client's connection options, "?" where unnamed. */
static void sql_where(const char *program, int argc, const char *const *argv,
		      char *out, size_t size)
{
	char db[200];
	int at;
	const char *h = option(argc, argv, "-h", "--host", &at);
	const char *p = option(argc, argv, "-p", "--port", &at);
	const char *d = option(argc, argv, "-d", "--dbname", &at);

	if (strcmp(program, "sqlite3") == 0) {
		rest_of(argc, argv, 1, db, sizeof(db));
		db[strcspn(db, " ")] = '\0';
		snprintf(out, size, "sqlite:%s", db);
		return;
	}
	if (strcmp(program, "mysql") == 0 || strcmp(program, "mariadb") == 0) {
		p = option(argc, argv, "-P", "--port", &at);
		d = option(argc, argv, "-D", "--database", &at);
		if (!d) { /* mysql [OPTIONS] DB */
			static const char *const valued = "huPeDS";

			for (int i = 1; i < argc; i++) {
				const char *a = argv[i];

				if (a[0] == '-' && a[1] && !a[2] &&
				    strchr(valued, a[1])) {
					i++; /* its value */
					continue;
				}
				if (is_option(a))
					continue;
				snprintf(db, sizeof(db), "%s", a);
				d = db;
				break;
			}
		}
	}
	snprintf(out, size, "%s://%s:%s/%s", program, h ? h : "?", p ? p : "?",
		 d ? d : "?");
}

/* mongosh --eval: db.C.drop(), db.dropDatabase(), db.C.deleteMany({}) */
static void mongo(const char *js, const char *where, struct lg_cli_match *m)
{
	const char *p = js;

	while ((p = strstr(p, "db.")) != NULL) {
		const char *c = p + 3, *dot = c + strcspn(c, ".(");
		char coll[96];

		p = c;
		if (strncmp(c, "dropDatabase(", 13) == 0) {
			add_target(m, false, where, "", "");
			continue;
		}
		if (*dot != '.' || (size_t)(dot - c) >= sizeof(coll))
			continue;
		snprintf(coll, sizeof(coll), "%.*s", (int)(dot - c), c);
		if (strncmp(dot, ".drop(", 6) == 0 ||
		    strncmp(dot, ".deleteMany({})", 15) == 0 ||
		    strncmp(dot, ".remove({})", 11) == 0)
			add_target(m, false, where, "/", coll);
	}
}

static void sql(const char *program, int argc, const char *const *argv,
		struct lg_cli_match *m)
{
	const char *text = NULL, *p, *e;
	struct lg_sql_stmt st;
	char where[160];
	int at;

	sql_where(program, argc, argv, where, sizeof(where));
	if (strcmp(program, "psql") == 0)
		text = option(argc, argv, "-c", "--command", &at);
	else if (strcmp(program, "mongosh") == 0)
		text = option(argc, argv, NULL, "--eval", &at);
	else if (strcmp(program, "sqlite3") == 0) {
		int n = 0;

		for (int i = 1; i < argc; i++)
			if (!is_option(argv[i]) && ++n == 2)
				text = argv[i];
	} else
		text = option(argc, argv, "-e", "--execute", &at);
	if (!text)
		return; /* statements on stdin: the wire's, where it is read */
	if (strcmp(program, "mongosh") == 0) {
		mongo(text, where, m);
		if (m->n)
			snprintf(m->verb, sizeof(m->verb), "mongosh drop");
		return;
	}
	p = text;
	e = text + strlen(text);
	while (lg_sql_next(&p, e, &st)) {
		if (st.kind == LG_SQL_OTHER)
			continue;
		if (!m->n || !m->made[m->n - 1])
			snprintf(m->verb, sizeof(m->verb), "%s %s", program,
				 st.tag);
		for (unsigned k = 0; k < st.n; k++) {
			if (st.database && strcmp(program, "sqlite3") != 0) {
				char server[160];
				char *slash;

				/* "psql://h:p/db": the server's "psql://h:p" */
				snprintf(server, sizeof(server), "%s", where);
				slash = strstr(server, "://");
				if (slash && (slash = strchr(slash + 3, '/')))
					*slash = '\0';
				add_target(m, st.kind == LG_SQL_CREATE, server,
					   "/", st.names[k]);
			} else {
				add_target(m, st.kind == LG_SQL_CREATE, where,
					   "/", st.names[k]);
			}
		}
	}
}

/*
 * redis-cli's command: FLUSHALL, FLUSHDB, DEL and UNLINK destroy; the
 * writes that make a key make it the session's.
 */
static void redis(int argc, const char *const *argv, struct lg_cli_match *m)
{
	static const char *const valued[] = { "-h", "-p", "-n",	    "-a",
					      "-u", "-s", "--user", "--pass",
					      "-r", "-i", NULL };
	static const char *const makes[] = {
		"set",	  "setnx",  "setex", "psetex", "hset",
		"hsetnx", "hmset",  "lpush", "rpush",  "sadd",
		"zadd",	  "xadd",   "mset",  "msetnx", "append",
		"incr",	  "incrby", "copy",  NULL
	};
	int i = 1;
	bool made = false;
	const char *cmd;

	for (; i < argc; i++) {
		bool takes = false;

		if (!is_option(argv[i]))
			break;
		for (int k = 0; valued[k]; k++)
			takes |= strcmp(argv[i], valued[k]) == 0;
		i += takes;
	}
	if (i >= argc)
		return; /* commands on stdin, or interactive */
	cmd = argv[i++];
	if (strcasecmp(cmd, "flushall") == 0 ||
	    strcasecmp(cmd, "flushdb") == 0) {
		add_target(m, false, "redis-cli: ", "*", "");
		return;
	}
	if (strcasecmp(cmd, "del") != 0 && strcasecmp(cmd, "unlink") != 0) {
		for (int k = 0; makes[k]; k++)
			made |= strcasecmp(cmd, makes[k]) == 0;
		if (!made || i >= argc)
			return;
		/* MSET k v k v: every other one */
		for (int step = strncasecmp(cmd, "mset", 4) == 0 ? 2 : argc;
		     i < argc; i += step)
			add_target(m, true, "redis-cli: ", argv[i], "");
		return;
	}
	for (; i < argc; i++)
		add_target(m, false, "redis-cli: ", argv[i], "");
}

int lg_cli_classify(const struct lg_cli_table *t, const char *program, int argc,
		    const char *const *argv, const char *cwd,
		    struct lg_cli_match *out)
{
	memset(out, 0, sizeof(*out));
	if (!t || argc < 1 || dry_run(argc, argv))
		return 0;
	for (size_t k = 0; k < t->n; k++) {
		const struct cli_rule *r = &t->r[k];
		char rest[LG_CLI_TARGET_MAX];
		int i;

		if (strcmp(r->program, program) != 0)
			continue;
		snprintf(out->verb, sizeof(out->verb), "%s", program);
		i = match(r->pattern, argc, argv, out->verb, sizeof(out->verb));
		if (i < 0)
			continue;
		switch (r->target) {
		case T_SQL:
			sql(program, argc, argv, out);
			/* libpq's and MySQL's clients: their wire is read */
			out->wire = strcmp(program, "psql") == 0 ||
				    strcmp(program, "mysql") == 0 ||
				    strcmp(program, "mariadb") == 0;
			if (out->n)
				return 1;
			memset(out, 0, sizeof(*out));
			continue;
		case T_CWD:
			add_target(out, r->makes, program, ": ",
				   cwd ? cwd : "?");
			break;
		case T_REDIS:
			redis(argc, argv, out);
			if (out->n)
				return 1;
			memset(out, 0, sizeof(*out));
			continue;
		case T_OPT: {
			int at;
			const char *v = option(argc, argv, NULL, r->opt, &at);

			if (!v) { /* docker run without --name: nothing named */
				memset(out, 0, sizeof(*out));
				continue;
			}
			add_target(out, r->makes, program, ": ", v);
			break;
		}
		case T_URL: {
			const char *url = NULL;

			for (int j = 1; j < argc && !url; j++)
				if (strstr(argv[j], "://"))
					url = argv[j];
			if (!url) {
				rest_of(argc, argv, i, rest, sizeof(rest));
				rest[strcspn(rest, " ")] = '\0';
				url = rest;
			}
			add_target(out, r->makes, url, "", "");
			out->targets[0][strcspn(out->targets[0], "?#")] = '\0';
			out->wire = strncasecmp(url, "http://", 7) == 0;
			break;
		}
		case T_NEXT:
		case T_LAST:
		case T_REST:
			rest_of(argc, argv, i, rest, sizeof(rest));
			if (r->target == T_NEXT)
				rest[strcspn(rest, " ")] = '\0';
			if (r->target == T_LAST && strrchr(rest, ' '))
				memmove(rest, strrchr(rest, ' ') + 1,
					strlen(strrchr(rest, ' ')));
			if (!*rest) { /* docker system prune: its words */
				const char *w = out->verb + strlen(program);

				snprintf(rest, sizeof(rest), "%s",
					 *w == ' ' ? w + 1 : w);
			}
			add_target(out, r->makes, program, ": ", rest);
			break;
		}
		/* libpq's clients: their statements are on the wire */
		if (strcmp(program, "dropdb") == 0)
			out->wire = true;
		return 1;
	}
	memset(out, 0, sizeof(*out));
	return 0;
}
