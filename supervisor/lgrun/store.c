// SPDX-License-Identifier: MIT
/*
 * The shared store in lgrun ([store] backend = redis): the guard's shared
 * windows handed to the session, its kill channel watched (another
 * supervisor of the session tripped), the session told when it is lost
 * and back, and told after a trip here.
 */
#include "run.h"

/*
 * The store was lost or is back (on whichever thread found it so): the
 * kill channel, reopened, is watched by the main thread (store_watch).
 */
static void store_state(void *ctx, bool up, const char *what)
{
	struct loop *l = ctx;
	uint64_t one = 1;

	lg_session_notice(l->s, LG_EV_WARN,
			  &(struct lg_notice){ .rule = "store",
					       .reason = up ? "store_back" :
							      "store_lost",
					       .pid = 0,
					       .exe = "lgrun",
					       .summary = what });
	if (up && write(l->efd, &one, sizeof(one)) < 0)
		lg_dbg("cannot wake the main loop: %s", strerror(errno));
}

static bool store_is_up(void *ctx)
{
	return lg_store_check(ctx);
}

/* The kill channel: another supervisor of the session tripped. */
static void store_message(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;
	char summary[LG_SUMMARY_MAX];
	int r = lg_store_sub_read(l->store.store, summary, sizeof(summary));

	(void)events;
	if (r < 0) {
		/* the store closed it (only this thread does) */
		lg_sources_unwatch(&l->src, fd);
		l->store.fd = -1;
		lg_session_notice(
			l->s, LG_EV_WARN,
			&(struct lg_notice){
				.rule = "store",
				.reason = "store_lost",
				.pid = 0,
				.exe = "lgrun",
				.summary =
					"the store's kill channel was lost: a trip on another host no longer stops this one" });
		return;
	}
	if (r == 0)
		return;
	lg_warn("another supervisor of the session stopped it: %s", summary);
	lg_session_notice(l->s, LG_EV_STOP,
			  &(struct lg_notice){ .rule = "store",
					       .summary = summary });
}

void store_free(void *ctx)
{
	struct loop *l = ctx;

	lg_store_free(l->store.store);
	l->store.store = NULL;
	l->store.fd = -1;
}

const struct lg_loop_source store_source = { "store", store_message, NULL, NULL,
					     store_free };

void store_watch(struct loop *l)
{
	int fd = l->store.store ? lg_store_sub_fd(l->store.store) : -1;

	if (fd < 0 || fd == l->store.fd)
		return;
	if (lg_sources_watch(&l->src, fd, EPOLLIN, &store_source, l) == 0)
		l->store.fd = fd;
}

/* down: why the store could not be opened (on_store_error = local) */
void store_start(struct loop *l, const char *down)
{
	struct lg_store *st = l->store.store;

	if (st) {
		lg_session_bind(l->s, &(struct lg_session_hooks){
					      .shared = lg_store_windows(st),
					      .store_up = l->cfg->store_fail ?
								  store_is_up :
								  NULL,
					      .store_ctx = st });
		lg_store_on_state(st, store_state, l);
		store_watch(l);
	} else if (down[0]) {
		char msg[700];

		snprintf(
			msg, sizeof(msg),
			"the shared store is unavailable (%s): this session counts on this host alone (on_store_error = local)",
			down);
		lg_session_notice(
			l->s, LG_EV_WARN,
			&(struct lg_notice){ .rule = "store",
					     .reason = "store_unavailable",
					     .pid = 0,
					     .exe = "lgrun",
					     .summary = msg });
	}
}

void store_tell_killed(struct loop *l)
{
	struct lg_session_view v;
	struct lg_json j = { 0 };
	char t[40];

	lg_session_view(l->s, &v);
	if (!l->store.store || v.peer_killed)
		return;
	/* every supervisor of the session stops, and stays blocked */
	lg_json_begin(&j);
	lg_json_str(&j, "session", l->id);
	lg_json_str(&j, "reason", v.trip_reason);
	lg_json_str(&j, "summary", v.trip_summary);
	lg_time_iso(lg_real_ns(), t, sizeof(t));
	lg_json_str(&j, "time", t);
	if (lg_store_mark_killed(l->store.store, lg_json_end(&j),
				 v.trip_summary) < 0)
		lg_err("cannot mark the session killed in the shared store: the other hosts were not told");
	lg_json_free(&j);
}
