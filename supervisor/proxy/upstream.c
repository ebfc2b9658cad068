// SPDX-License-Identifier: MIT
#include "proxy_int.h"

static void headers_ready(struct req *r, long status, bool failed);

/* --- upstream (curl) ----------------------------------------------------- */

bool hop_by_hop(const char *h, size_t n)
{
	static const char *const names[] = {
		"connection:",	    "keep-alive:",	 "transfer-encoding:",
		"content-length:",  "proxy-connection:", "te:",
		"trailer:",	    "upgrade:",		 "host:",
		"accept-encoding:",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t k = strlen(names[i]);

		if (n >= k && strncasecmp(h, names[i], k) == 0)
			return true;
	}
	return false;
}

static size_t on_header(char *b, size_t size, size_t nmemb, void *ud)
{
	struct req *r = ud;
	size_t n = size * nmemb;

	if (n >= 5 && strncmp(b, "HTTP/", 5) == 0) {
		/* a new status line (after 100-continue, or a redirect) */
		curl_slist_free_all(r->resp_headers);
		r->resp_headers = NULL;
		return n;
	}
	if (n <= 2) { /* the blank line: headers are complete */
		long st = 0;

		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &st);
		if (st >= 200) /* not a 100-continue: the agent gets them now */
			headers_ready(r, st, false);
		return n;
	}
	if (!hop_by_hop(b, n)) {
		char line[8192];
		size_t l = n < sizeof(line) - 1 ? n : sizeof(line) - 1;

		memcpy(line, b, l);
		while (l && (line[l - 1] == '\n' || line[l - 1] == '\r'))
			l--;
		line[l] = '\0';
		r->resp_headers = curl_slist_append(r->resp_headers, line);
	}
	return n;
}

static void headers_ready(struct req *r, long status, bool failed)
{
	pthread_mutex_lock(&r->m);
	if (!r->headers_done) {
		r->headers_done = true;
		r->status = status;
		r->failed = failed;
		pthread_cond_broadcast(&r->c);
	}
	pthread_mutex_unlock(&r->m);
}

static size_t on_body(char *b, size_t size, size_t nmemb, void *ud)
{
	struct req *r = ud;
	size_t n = size * nmemb, off = 0;

	while (off < n) {
		ssize_t w = send(r->pipe[1], b + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 0; /* the agent went away: abort the transfer */
		off += (size_t)w;
	}
	return n;
}

/* The response was ended by lgrun (output_repeat): no more of it is read. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct req *r = ud;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return atomic_load(&r->stop) ? 1 : 0;
}

static CURL *take_handle(struct lg_proxy *p)
{
	CURL *h = NULL;

	pthread_mutex_lock(&p->pool_lock);
	if (p->npool)
		h = p->pool[--p->npool];
	pthread_mutex_unlock(&p->pool_lock);
	if (h)
		curl_easy_reset(h); /* options go, the connection cache stays */
	else
		h = curl_easy_init();
	return h;
}

static void give_handle(struct lg_proxy *p, CURL *h)
{
	pthread_mutex_lock(&p->pool_lock);
	if (p->npool < POOL) {
		p->pool[p->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&p->pool_lock);
	if (h)
		curl_easy_cleanup(h);
}

void *upstream_thread(void *arg)
{
	struct req *r = arg;
	CURL *h = take_handle(r->p);
	char url[4096];
	const char *rest = r->uri + 1 + strlen(r->route->name);
	CURLcode rc;
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", r->route->upstream, rest);
	r->h = h;
	if (!h) {
		headers_ready(r, 0, true);
		close(r->pipe[1]);
		r->pipe[1] = -1;
		return NULL;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->error);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, r);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	if (strcmp(r->method, "GET") == 0) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? r->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)r->len);
	}
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	headers_ready(r, status, rc != CURLE_OK && status == 0);
	if (rc != CURLE_OK && status == 0)
		COUNT(r->p->st.upstream_errors);
	close(r->pipe[1]);
	r->pipe[1] = -1;
	give_handle(r->p, h);
	return NULL;
}
