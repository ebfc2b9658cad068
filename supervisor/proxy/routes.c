// SPDX-License-Identifier: MIT
/* The proxy's routes and its listening socket: lgrun's side of the proxy. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy.h"

/*
 * The model routes, one line each: the route's name, which is also its
 * format (each API of llm/ names the route it is spoken on), the variable
 * its clients read, and its public upstream.
 */
static const struct {
	const char *name, *env, *def;
} builtin[] = {
	{ "anthropic", "ANTHROPIC_BASE_URL", "https://api.anthropic.com" },
	{ "openai", "OPENAI_BASE_URL", "https://api.openai.com/v1" },
	{ "gemini", "GOOGLE_GEMINI_BASE_URL",
	  "https://generativelanguage.googleapis.com" },
};

/* A route's format: the name of a built-in route (an API's route, llm/). */
static bool known_format(const char *format)
{
	for (size_t b = 0; b < sizeof(builtin) / sizeof(builtin[0]); b++)
		if (strcmp(builtin[b].name, format) == 0)
			return true;
	return false;
}

static void set_route(struct lg_proxy_route *r, const char *name,
		      const char *format, const char *env, const char *def)
{
	const char *v = getenv(env);
	size_t l;

	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->format, sizeof(r->format), "%s", format);
	snprintf(r->env, sizeof(r->env), "%s", env);
	snprintf(r->upstream, sizeof(r->upstream), "%s", v && *v ? v : def);
	l = strlen(r->upstream);
	while (l > 0 && r->upstream[l - 1] == '/')
		r->upstream[--l] = '\0';
}

size_t lg_proxy_default_routes(struct lg_proxy_route *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]) && n < max;
	     i++, n++)
		set_route(&out[n], builtin[i].name, builtin[i].name,
			  builtin[i].env, builtin[i].def);
	return n;
}

int lg_proxy_extra_routes(const char *spec, struct lg_proxy_route *routes,
			  size_t n, size_t max, const char **bad)
{
	const char *p = spec ? spec : "";

	while (*p) {
		char var[64], fmt[16], name[64];
		size_t len, vl, i, b;
		const char *colon;

		p += strspn(p, ", \t");
		if (!*p)
			break;
		len = strcspn(p, ", \t");
		colon = memchr(p, ':', len);
		vl = colon ? (size_t)(colon - p) : 0;
		if (!colon || !vl || vl >= sizeof(var) ||
		    len - vl - 1 >= sizeof(fmt) || n >= max)
			goto bad;
		memcpy(var, p, vl);
		var[vl] = '\0';
		memcpy(fmt, colon + 1, len - vl - 1);
		fmt[len - vl - 1] = '\0';
		for (b = 0; b < sizeof(builtin) / sizeof(builtin[0]); b++)
			if (strcmp(builtin[b].name, fmt) == 0)
				break;
		for (i = 0; i < vl; i++)
			if (!((var[i] >= 'A' && var[i] <= 'Z') ||
			      (var[i] >= '0' && var[i] <= '9') ||
			      var[i] == '_'))
				break;
		if (b == sizeof(builtin) / sizeof(builtin[0]) || i < vl)
			goto bad;
		/* the route is the variable's name, lower case */
		for (i = 0; i <= vl; i++)
			name[i] = (char)(var[i] >= 'A' && var[i] <= 'Z' ?
						 var[i] - 'A' + 'a' :
						 var[i]);
		set_route(&routes[n++], name, fmt, var, builtin[b].def);
		p += len;
		continue;
bad:
		if (bad)
			*bad = p;
		return -EINVAL;
	}
	return (int)n;
}

static const struct {
	const char *host, *format;
} decrypt_known[] = {
	{ "api.anthropic.com", "anthropic" },
	{ "api.openai.com", "openai" },
	{ "generativelanguage.googleapis.com", "gemini" },
	/* Codex with a ChatGPT login: /backend-api/codex/responses */
	{ "chatgpt.com", "openai" },
	/* gemini-cli with a Google login: Code Assist */
	{ "cloudcode-pa.googleapis.com", "gemini" },
};

/* One "HOST[:FORMAT][=UPSTREAM]" entry of len bytes at p. */
static int decrypt_one(const char *p, size_t len, struct lg_proxy_route *routes,
		       size_t *nroutes, size_t max,
		       struct lg_proxy_decrypt *hosts, size_t *nhosts)
{
	struct lg_proxy_route *rt;
	struct lg_proxy_decrypt *d;
	const char *eq, *colon, *fmt = NULL;
	size_t hl;

	eq = memchr(p, '=', len);
	colon = memchr(p, ':', eq ? (size_t)(eq - p) : len);
	hl = colon ? (size_t)(colon - p) : eq ? (size_t)(eq - p) : len;
	if (!hl || hl >= sizeof(d->host) || *nhosts >= LG_PROXY_DECRYPT_MAX ||
	    *nroutes >= max)
		return -EINVAL;
	for (size_t k = 0; k < *nhosts; k++)
		if (strlen(hosts[k].host) == hl &&
		    strncasecmp(hosts[k].host, p, hl) == 0)
			return -EINVAL; /* twice: which one is meant? */
	d = &hosts[*nhosts];
	rt = &routes[*nroutes];
	memset(rt, 0, sizeof(*rt));
	memcpy(d->host, p, hl);
	d->host[hl] = '\0';
	for (size_t i = 0; i < sizeof(decrypt_known) / sizeof(decrypt_known[0]);
	     i++)
		if (strcasecmp(decrypt_known[i].host, d->host) == 0)
			fmt = decrypt_known[i].format;
	if (colon) {
		size_t fl = (eq ? (size_t)(eq - colon) : len - hl) - 1;

		if (fl >= sizeof(rt->format))
			return -EINVAL;
		memcpy(rt->format, colon + 1, fl);
		rt->format[fl] = '\0';
	} else if (fmt) {
		snprintf(rt->format, sizeof(rt->format), "%s", fmt);
	} else {
		return -EINVAL; /* an unknown host needs its format */
	}
	if (!known_format(rt->format))
		return -EINVAL;
	if (eq) {
		size_t ul = len - (size_t)(eq - p) - 1;

		if (!ul || ul >= sizeof(rt->upstream) ||
		    (strncmp(eq + 1, "http://", 7) &&
		     strncmp(eq + 1, "https://", 8)))
			return -EINVAL;
		memcpy(rt->upstream, eq + 1, ul);
		rt->upstream[ul] = '\0';
	} else {
		snprintf(rt->upstream, sizeof(rt->upstream), "https://%s",
			 d->host);
	}
	while (strlen(rt->upstream) > 8 &&
	       rt->upstream[strlen(rt->upstream) - 1] == '/')
		rt->upstream[strlen(rt->upstream) - 1] = '\0';
	snprintf(d->route, sizeof(d->route), "tls-%zu", *nhosts);
	snprintf(rt->name, sizeof(rt->name), "%s", d->route);
	(*nhosts)++;
	(*nroutes)++;
	return 0;
}

/* Whether the list spec has an entry for host (its HOST part). */
static bool decrypt_names(const char *spec, const char *host)
{
	size_t hl = strlen(host);

	for (const char *p = spec; *p;) {
		size_t len;

		p += strspn(p, ", \t");
		len = strcspn(p, ", \t");
		if (len >= hl && strncasecmp(p, host, hl) == 0 &&
		    (len == hl || p[hl] == ':' || p[hl] == '='))
			return true;
		p += len;
	}
	return false;
}

int lg_proxy_decrypt_routes(const char *spec, struct lg_proxy_route *routes,
			    size_t *nroutes, size_t max,
			    struct lg_proxy_decrypt *hosts, size_t *nhosts,
			    const char **bad)
{
	const char *p = spec ? spec : "default";
	bool had_default = false;

	*bad = p;

	while (*p) {
		size_t len;

		p += strspn(p, ", \t");
		if (!*p)
			break;
		*bad = p;
		len = strcspn(p, ", \t");
		if (len == 7 && strncmp(p, "default", 7) == 0) {
			/*
			 * The model hosts, but for those the list names
			 * itself (sent elsewhere, read in another format)
			 */
			if (had_default)
				return -EINVAL;
			had_default = true;
			for (size_t i = 0; i < sizeof(decrypt_known) /
						       sizeof(decrypt_known[0]);
			     i++) {
				const char *h = decrypt_known[i].host;

				if (spec && decrypt_names(spec, h))
					continue;
				if (decrypt_one(h, strlen(h), routes, nroutes,
						max, hosts, nhosts) < 0)
					return -EINVAL;
			}
		} else if (decrypt_one(p, len, routes, nroutes, max, hosts,
				       nhosts) < 0) {
			return -EINVAL;
		}
		p += len;
	}
	return had_default || !spec;
}

size_t lg_proxy_decrypt_upstreams(struct lg_proxy_route *routes, size_t nbase,
				  size_t *nroutes, size_t max,
				  struct lg_proxy_decrypt *hosts,
				  size_t *nhosts)
{
	size_t added = 0;

	for (size_t i = 0; i < nbase; i++) {
		const char *u = routes[i].upstream, *h, *end;
		char host[256];
		size_t hl;
		bool known = false;

		if (strncmp(u, "https://", 8) != 0)
			continue; /* plain HTTP goes by absolute URI, unread */
		h = u + 8;
		end = h + strcspn(h, "/?#");
		hl = (size_t)(end - h);
		if (hl > 4 && memcmp(end - 4, ":443", 4) == 0)
			hl -= 4;
		if (!hl || hl >= sizeof(host) || memchr(h, ':', hl) ||
		    memchr(h, '@', hl))
			continue; /* another port, or credentials: not here */
		memcpy(host, h, hl);
		host[hl] = '\0';
		for (size_t k = 0; k < *nhosts; k++)
			known |= strcasecmp(hosts[k].host, host) == 0;
		if (known)
			continue;
		if (*nhosts >= LG_PROXY_DECRYPT_MAX || *nroutes >= max)
			break;
		snprintf(hosts[*nhosts].host, sizeof(hosts[0].host), "%s",
			 host);
		snprintf(hosts[*nhosts].route, sizeof(hosts[0].route),
			 "tls-%zu", *nhosts);
		memset(&routes[*nroutes], 0, sizeof(routes[0]));
		snprintf(routes[*nroutes].name, sizeof(routes[0].name), "%s",
			 hosts[*nhosts].route);
		snprintf(routes[*nroutes].format, sizeof(routes[0].format),
			 "%s", routes[i].format);
		snprintf(routes[*nroutes].upstream, sizeof(routes[0].upstream),
			 "https://%s", host);
		(*nhosts)++;
		(*nroutes)++;
		added++;
	}
	return added;
}

int lg_proxy_listen(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	*port = ntohs(a.sin_port);
	return fd;
}
