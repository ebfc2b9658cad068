// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "guard/cli.h"
#include "config_int.h"
#include "lib/canon.h"
#include "proxy/proxy.h"
#include "lib/text.h"
#include "../../preload/recog.h"

#ifndef LG_SYSCONFDIR
#define LG_SYSCONFDIR "/etc/lgrun"
#endif

/*
 * The defaults are the key table's (keys.c), read by each key's
 * parser as a file's value would be: one place says what a key is and
 * what it is by default.
 */
void lg_config_init(struct lg_config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < lg_config_nkeys; i++) {
		const struct lg_config_key *k = &lg_config_keys[i];

		/* a default that does not parse is a bug the unit tests catch */
		if (k->def && lg_config_set_value(c, k, k->def, true, NULL) < 0)
			abort();
	}
}

void lg_config_free(struct lg_config *c)
{
	for (size_t i = 0; i < c->n_ignore; i++)
		lg_ignore_rule_free(&c->ignore[i]);
	free(c->ignore);
	for (size_t i = 0; i < lg_config_nkeys; i++) {
		const struct lg_config_key *k = &lg_config_keys[i];

		if (lg_key_store(k)->free)
			lg_key_store(k)->free((char *)c + k->off);
	}
	free(c->config_path);
	free(c->profile);
	free(c->agent);
	memset(c, 0, sizeof(*c));
}

int lg_config_finish(struct lg_config *c, struct lg_error *err)
{
	if (c->store_redis && !c->store_url)
		return lg_error_set(
			err, EINVAL,
			"%s: [store] backend = redis needs a url (url = redis://HOST:PORT/DB or unix:/PATH)",
			c->config_path ? c->config_path : "config");
	if (c->remote_commands) { /* read as the session will read it */
		struct lg_cli_table *t =
			lg_cli_table_new(c->remote_commands, err);

		if (!t) {
			char msg[sizeof(err->msg)];

			snprintf(msg, sizeof(msg), "%s", err->msg);
			return lg_error_set(err, EINVAL, "%s: %s",
					    c->config_path ? c->config_path :
							     "config",
					    msg);
		}
		lg_cli_table_free(t);
	}
	if (!c->default_ignores)
		return 0;
	for (size_t i = 0; lg_default_ignores[i][1]; i++) {
		if (lg_config_add_ignore(c, lg_default_ignores[i][0],
					 lg_default_ignores[i][1]) < 0)
			return lg_error_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

enum phase { PH_BASE, PH_PROFILE, PH_AGENT };

struct parse {
	struct lg_config *c;
	enum phase phase;
	const char *profile, *agent;
	bool profile_file; /* parsing a profile file: its plain sections are the profile */
	bool saw_profile; /* a [profile NAME] section for the selected profile */
	/* keys under [profile ...], [agent ...]: else their phases apply nothing */
	bool has_profiles, has_agents;
	const char *text; /* the source being parsed */
	int cur_line; /* line the reader handed to inih last */
	int err_line; /* line of the first error we saw */
	char msg[768]; /* first error, from the handler */
	/* keys set so far in this file, for the duplicate-key error */
	struct seen {
		char key[192];
		int line;
	} * seen;
	size_t nseen, seen_cap;
};

/* A key set twice in one section is an error: which one would win? */
static int check_duplicate(struct parse *p, const char *section,
			   const char *name, const struct lg_config_key *k)
{
	char key[192];

	if (lg_key_store(k)->appends)
		return 0; /* repeated on purpose: one glob per line */
	snprintf(key, sizeof(key), "%s\n%s", section, name);
	for (size_t i = 0; i < p->nseen; i++)
		if (strcmp(p->seen[i].key, key) == 0)
			return p->seen[i].line;
	if (p->nseen == p->seen_cap) {
		size_t cap = p->seen_cap ? 2 * p->seen_cap : 32;
		struct seen *n = realloc(p->seen, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->seen = n;
		p->seen_cap = cap;
	}
	snprintf(p->seen[p->nseen].key, sizeof(p->seen[p->nseen].key), "%s",
		 key);
	p->seen[p->nseen++].line = p->cur_line;
	return 0;
}

static bool known_section(const char *s)
{
	for (size_t i = 0; i < lg_config_nkeys; i++)
		if (strcmp(lg_config_keys[i].section, s) == 0)
			return true;
	return false;
}

static int fail(struct parse *p, const char *fmt, const char *a, const char *b)
{
	if (!p->msg[0]) {
		snprintf(p->msg, sizeof(p->msg), fmt, a, b);
		p->err_line = p->cur_line;
	}
	return 0; /* inih: error on this line */
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct parse *p = user;
	struct lg_error why = { "" };
	const struct lg_config_key *k;
	bool apply;
	int r;

	if (!name)
		return 1; /* a section header on its own */
	if (strncmp(section, "profile ", 8) == 0 ||
	    strncmp(section, "agent ", 6) == 0) {
		bool is_profile = section[0] == 'p';
		const char *who = section + (is_profile ? 8 : 6);
		const char *dot = strchr(name, '.');
		char sec[64];

		if (is_profile)
			p->has_profiles = true;
		else
			p->has_agents = true;

		if (p->profile_file && is_profile)
			return fail(
				p,
				"[%s]: a profile file cannot hold other profiles%s",
				section, "");
		if (!dot || (size_t)(dot - name) >= sizeof(sec))
			return fail(
				p,
				"[%s]: key '%s' must be SECTION.KEY, e.g. volumetric.max_ops",
				section, name);
		memcpy(sec, name, (size_t)(dot - name));
		sec[dot - name] = '\0';
		k = lg_config_key_find(sec, dot + 1);
		if (!k)
			return fail(p, "[%s]: unknown key '%s'", section, name);
		if (is_profile) {
			apply = p->phase == PH_PROFILE && p->profile &&
				strcmp(who, p->profile) == 0;
			if (apply)
				p->saw_profile = true;
		} else {
			apply = p->phase == PH_AGENT && p->agent &&
				strcmp(who, p->agent) == 0;
		}
	} else {
		if (!*section)
			return fail(p, "key '%s' is outside any [section]%s",
				    name, "");
		if (!known_section(section))
			return 0; /* reported at its header by the reader */
		k = lg_config_key_find(section, name);
		if (!k)
			return fail(p, "unknown key '%s' in [%s]", name,
				    section);
		apply = p->profile_file ? p->phase == PH_PROFILE :
					  p->phase == PH_BASE;
	}
	r = check_duplicate(p, section, name, k);
	if (r > 0) {
		char what[256], first[32];

		snprintf(what, sizeof(what), "duplicate key '%s' in [%s]", name,
			 section);
		snprintf(first, sizeof(first), "%d", r);
		return fail(p, "%s (first set on line %s)", what, first);
	}
	if (r < 0)
		return fail(p, "out of memory%s%s", "", "");
	r = lg_config_set_value(p->c, k, value, apply, &why);
	if (r == -ENOMEM)
		return fail(p, "out of memory%s%s", "", "");
	if (r < 0)
		return fail(p, "%s%s", why.msg, "");
	return 1;
}

struct reader {
	const char *pos;
	struct parse *p;
};

static bool section_ok(const char *name, size_t n)
{
	char sec[128];

	if (n >= sizeof(sec))
		return false;
	memcpy(sec, name, n);
	sec[n] = '\0';
	return known_section(sec) ||
	       (n > 8 && strncmp(sec, "profile ", 8) == 0) ||
	       (n > 6 && strncmp(sec, "agent ", 6) == 0);
}

/*
 * Feeds inih one line at a time, so we know the line of every error,
 * catch section headers we do not know (even ones with no keys under
 * them) and lines too long for inih's buffer.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	struct parse *p = r->p;
	const char *nl, *b;
	size_t len, max = (size_t)num - 2;

	if (!*r->pos)
		return NULL;
	nl = strchr(r->pos, '\n');
	len = nl ? (size_t)(nl - r->pos) : strlen(r->pos);
	p->cur_line++;
	if (len > max) {
		char what[64];

		snprintf(what, sizeof(what), "%zu", max);
		fail(p, "line longer than %s characters%s", what, "");
		len = 0; /* hand inih an empty line: nothing half-parsed */
	}
	memcpy(str, r->pos, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	r->pos += (nl ? (size_t)(nl - r->pos) + 1 : strlen(r->pos));
	for (b = str; *b == ' ' || *b == '\t'; b++)
		;
	if (*b == '[') {
		const char *e = strchr(b, ']');

		if (e && !section_ok(b + 1, (size_t)(e - b - 1))) {
			char sec[128];

			snprintf(sec, sizeof(sec), "%.*s", (int)(e - b - 1),
				 b + 1);
			fail(p, "unknown section [%s]%s", sec, "");
		}
	}
	return str;
}

static int parse_text(struct parse *p, const char *text, const char *name,
		      struct lg_error *err)
{
	struct reader r = { text, p };
	int line;

	p->msg[0] = '\0';
	p->err_line = 0;
	p->cur_line = 0;
	p->text = text;
	p->nseen = 0;
	line = ini_parse_stream(read_line, &r, handler, p);
	if (line == 0 && !p->msg[0])
		return 0;
	if (line < 0)
		return lg_error_set(err, EIO, "%s: cannot parse", name);
	/* inih reports the first line it could not parse; ours may be later. */
	if (p->msg[0] && (line == 0 || p->err_line <= line))
		return lg_error_set(err, EINVAL, "%s:%d: %s", name, p->err_line,
				    p->msg);
	return lg_error_set(
		err, EINVAL,
		"%s:%d: syntax error: expected [section] or key = value", name,
		line);
}

/* Config files are small: read them whole, so errors can point at lines. */
static int slurp(const char *path, char **out, struct lg_error *err)
{
	FILE *f = fopen(path, "re");
	size_t n, cap = 1 << 20;
	char *buf;
	int r;

	if (!f)
		return lg_error_set(err, errno, "%s: cannot open config: %s",
				    path, strerror(errno));
	buf = malloc(cap + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, cap + 1, f);
	r = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!r && n > cap)
		r = lg_error_set(err, EFBIG, "%s: config larger than 1 MiB",
				 path);
	else if (r)
		lg_error_set(err, -r, "%s: cannot read config", path);
	if (r) {
		free(buf);
		return r;
	}
	buf[n] = '\0';
	{
		/* inih would end the line there, and take 3 of "3<NUL>junk" */
		const char *nul = memchr(buf, '\0', n);

		if (nul) {
			int line = 1;

			for (const char *c = buf; c < nul; c++)
				line += *c == '\n';
			free(buf);
			return lg_error_set(
				err, EINVAL,
				"%s:%d: a NUL byte in the line: a config file is text",
				path, line);
		}
	}
	*out = buf;
	return 0;
}

static int set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

static int load_profile_file(struct lg_config *c, const char *cfgpath,
			     const char *profile, const char *agent,
			     struct lg_error *err)
{
	char dirs[3][PATH_MAX];
	char path[PATH_MAX + 64];
	size_t nd = 0;
	struct parse p = {
		.c = c, .profile = profile, .agent = agent, .profile_file = true
	};
	char *text = NULL;
	bool found = false;
	int r;

	for (const char *s = profile; *s; s++) {
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' &&
		    *s != '.')
			return lg_error_set(
				err, EINVAL,
				"profile name '%s' may only hold letters, digits, '-', '_' and '.'",
				profile);
	}
	if (cfgpath) {
		const char *slash = strrchr(cfgpath, '/');

		if (slash)
			snprintf(dirs[nd++], PATH_MAX, "%.*s/profiles",
				 (int)(slash - cfgpath), cfgpath);
		else
			snprintf(dirs[nd++], PATH_MAX, "profiles");
	}
	snprintf(dirs[nd++], PATH_MAX, "%s/profiles", LG_SYSCONFDIR);
	if (nd == 2 && strcmp(dirs[0], dirs[1]) == 0)
		nd = 1;
	for (size_t i = 0; i < nd && !found; i++) {
		snprintf(path, sizeof(path), "%s/%s.ini", dirs[i], profile);
		found = access(path, F_OK) == 0;
	}
	if (!found)
		return lg_error_set(
			err, ENOENT,
			"profile '%s' not found: no [profile %s] section in the config and no %s.ini in %s%s%s",
			profile, profile, profile, dirs[0],
			nd > 1 ? " or " : "", nd > 1 ? dirs[1] : "");
	r = slurp(path, &text, err);
	if (r < 0)
		return r;
	p.phase = PH_PROFILE;
	r = parse_text(&p, text, path, err);
	if (r == 0) {
		p.phase = PH_AGENT;
		r = parse_text(&p, text, path, err);
	}
	free(text);
	free(p.seen);
	return r;
}

/* Runs one phase over the main source, if there is one. */
static int run_main(struct parse *p, const char *text, const char *name,
		    enum phase ph, struct lg_error *err)
{
	p->phase = ph;
	p->profile_file = false;
	return text ? parse_text(p, text, name ? name : "<string>", err) : 0;
}

static int load(struct lg_config *c, const char *text, const char *path,
		const char *profile, const char *agent, struct lg_error *err)
{
	struct parse p = { .c = c, .profile = profile, .agent = agent };
	char *owned = NULL;
	bool from_file = path && !text;
	int r;

	lg_error_clear(err);
	if (set_str(&c->profile, profile) < 0 ||
	    set_str(&c->agent, agent) < 0 ||
	    (from_file && set_str(&c->config_path, path) < 0))
		return -ENOMEM;
	if (from_file) {
		r = slurp(path, &owned, err);
		if (r < 0)
			return r;
		text = owned;
	}
	/*
	 * Order of precedence: defaults < file < profile < agent. Every pass
	 * checks every value, the first reports what is wrong; a later pass
	 * only applies its own sections' keys, so it is skipped when the
	 * first saw none of them (the default file holds none: three passes
	 * over it were 60 us of every start).
	 */
	r = run_main(&p, text, path, PH_BASE, err);
	if (!r && profile && p.has_profiles)
		r = run_main(&p, text, path, PH_PROFILE, err);
	if (!r && profile && !p.saw_profile)
		r = load_profile_file(c, from_file ? path : NULL, profile,
				      agent, err);
	if (!r && agent && p.has_agents)
		r = run_main(&p, text, path, PH_AGENT, err);
	free(owned);
	free(p.seen);
	return r;
}

int lg_config_load(struct lg_config *c, const char *path, const char *profile,
		   const char *agent, struct lg_error *err)
{
	const char *env = getenv("LGRUN_CONFIG");
	char def[PATH_MAX];

	if (!path && env && *env)
		path = env;
	if (!path) {
		snprintf(def, sizeof(def), "%s/lgrun.ini", LG_SYSCONFDIR);
		if (access(def, R_OK) == 0)
			path = def;
	}
	return load(c, NULL, path, profile, agent, err);
}

int lg_config_load_string(struct lg_config *c, const char *text,
			  const char *name, const char *profile,
			  const char *agent, struct lg_error *err)
{
	return load(c, text, name, profile, agent, err);
}
