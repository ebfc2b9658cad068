// SPDX-License-Identifier: MIT
/*
 * lgctl reset ID: a session the guard killed unblocked (its killed marker
 * removed, and the shared store's), the reset in the audit log.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "lgctl.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "record/audit.h"
#include "store/state.h"
#include "store/store.h"

/*
 * [store] backend = redis: the shared marker goes too, so every host may
 * start the session again. 1 removed, 0 there was none, -errno.
 */
static int reset_shared(const struct lg_config *cfg, const char *id)
{
	struct lg_store_cfg sc = { cfg->store_url,
				   cfg->store_prefix,
				   cfg->store_password_env,
				   (unsigned)cfg->store_timeout_ms,
				   id,
				   "lgctl",
				   false };
	struct lg_store *st;
	struct lg_error why;
	char rec[4096];
	int r;

	if (lg_store_open(&st, &sc, &why) < 0) {
		fprintf(stderr, "lgctl: the shared store is unavailable: %s\n",
			why.msg);
		return -EIO;
	}
	r = lg_store_killed(st, rec, sizeof(rec));
	if (r > 0)
		r = lg_store_reset(st) < 0 ? -EIO : 1;
	lg_store_free(st);
	return r;
}

int lgctl_reset(const char *dir, const struct lg_config *cfg, int argc,
		char **argv)
{
	const char *id = argv[1];
	struct lg_json j = { 0 };
	char audit[PATH_MAX + 16];
	int r, shared = 0;

	if (argc != 2)
		return LGCTL_USAGE;
	if (!lg_session_id_valid(id)) {
		fprintf(stderr, "lgctl: '%s' is not a valid session id\n", id);
		return 2;
	}
	r = lg_state_reset(dir, id);
	if (cfg->store_redis) {
		shared = reset_shared(cfg, id);
		if (shared < 0) {
			fprintf(stderr,
				"lgctl: %s; the other hosts of session '%s' stay blocked until the store can be reached\n",
				r == 0 ? "this host's marker was removed" :
					 "nothing was reset",
				id);
			return 2;
		}
		if (shared > 0 && r == -ENOENT)
			r = 0;
	}
	if (r == -ENOENT) {
		fprintf(stderr,
			"lgctl: session '%s' is not killed (nothing to reset in %s)\n",
			id, dir);
		return 1;
	}
	if (r < 0) {
		fprintf(stderr, "lgctl: cannot reset '%s': %s\n", id,
			strerror(-r));
		return 2;
	}
	lg_audit_begin(&j, lg_real_ns(), id, NULL, NULL, 0);
	lg_json_str(&j, "event", "reset");
	lg_json_str(&j, "by", lgctl_operator());
	{
		const char *sum =
			shared > 0 ?
				"session reset by operator, on every host (shared store)" :
				"session reset by operator";

		lg_json_str(&j, "summary", sum);
		lg_audit_falco(&j, id, NULL, "reset",
			       &(struct lg_falco){ .priority = "Notice",
						   .output = sum });
	}
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", dir);
	lg_audit_append(audit, lg_json_end(&j), true);
	lg_json_free(&j);
	printf("session '%s' reset: it may run again\n", id);
	return 0;
}
