/* SPDX-License-Identifier: MIT */
/*
 * The shared store ([store] backend = redis): what the supervisors of one
 * session on several hosts must agree on. Sliding windows (sorted sets,
 * each update one round trip of a server-side script, times from the
 * server's clock), the killed marker, and kills published to every
 * supervisor of the session. Keys carry the session as a hash tag
 * ("lgrun:{SESSION}:vol") so a Redis Cluster keeps a session on one slot.
 *
 * Every command is bounded by the configured timeout; a store that stops
 * answering is "down": the windows answer -1 (the guard counts locally),
 * what was counted meanwhile is kept in a journal, and at most once a
 * second the next call tries again and, when it is back, replays the
 * journal (reconciles). It locks itself (the guard's thread uses the
 * windows, the main thread the kill channel) and tells a change of its
 * state after its release.
 */
#ifndef LG_STORE_H
#define LG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guard/guard.h"
#include "lib/error.h"

struct lg_store;

struct lg_store_cfg {
	const char *url; /* redis://HOST:PORT/DB or unix:/PATH[?db=N] */
	const char *prefix; /* "lgrun:" */
	const char *password_env; /* the variable holding the password */
	unsigned timeout_ms;
	const char *session;
	const char *self; /* this supervisor: "host:pid" */
	/* on_store_error = fail: what is counted while it is down is refused,
	 * so it is not replayed */
	bool fail_closed;
};

/* Connects (commands and the kill channel): 0, or -errno and err. */
int lg_store_open(struct lg_store **out, const struct lg_store_cfg *cfg,
		  struct lg_error *err);
void lg_store_free(struct lg_store *st);

/* The windows the guard counts in (valid as long as st). */
const struct lg_shared_windows *lg_store_windows(struct lg_store *st);
bool lg_store_up(const struct lg_store *st);
/* Up, or back after a retry (tried at most once a second). */
bool lg_store_check(struct lg_store *st);
/* Called when the store is lost (up false) or back (up true). */
void lg_store_on_state(struct lg_store *st,
		       void (*fn)(void *ctx, bool up, const char *what),
		       void *ctx);

/* The shared killed marker: 1 (record filled), 0 none, -errno. */
int lg_store_killed(struct lg_store *st, char *record, size_t size);
/* Marks the session killed and tells its other supervisors: 0 or -errno. */
int lg_store_mark_killed(struct lg_store *st, const char *record,
			 const char *summary);
/* Removes the marker (lgctl reset): 0 or -errno. */
int lg_store_reset(struct lg_store *st);

/* The kill channel: readable when a message waits (-1: none). */
int lg_store_sub_fd(const struct lg_store *st);
/*
 * Reads what waits on the kill channel: 1 and the peer's summary when
 * another supervisor killed the session, 0 otherwise, -errno when the
 * channel was lost (it is not reopened).
 */
int lg_store_sub_read(struct lg_store *st, char *summary, size_t size);

#endif
