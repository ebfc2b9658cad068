/* SPDX-License-Identifier: MIT */
/* The audit log: one JSON object per line, appended, fsync'ed on demand. */
#ifndef LG_AUDIT_H
#define LG_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/json.h"

/* ISO 8601 UTC with milliseconds. */
void lg_time_iso(int64_t real_ns, char *buf, size_t size);

/*
 * Begins an audit record: its time (now, real ns), its id and the session.
 * The id is "<session>#<tag>": the session's own records are counted (1,
 * 2, ...); lgctl's have no tag (NULL) and get the time in ms. id_out
 * (optional) gets the id.
 */
void lg_audit_begin(struct lg_json *j, int64_t now, const char *session,
		    const char *tag, char *id_out, size_t id_size);

/*
 * The fields log pipelines read in Falco's alerts, added next to lgrun's
 * own (docs/audit.md: "Audit records in log pipelines"): priority, output, source
 * ("lgrun"), hostname, tags (["lgrun", event, rule]) and output_fields
 * (lgrun.session, lgrun.agent, lgrun.event, lgrun.rule, evt.type, fd.name,
 * proc.pid, proc.name: those it has). time and rule are lgrun's own.
 */
struct lg_falco {
	const char
		*priority; /* Critical, Error, Warning, Notice, Informational */
	const char *output; /* NULL: the event's name */
	const char *rule, *op, *target, *exe; /* NULL: none */
	int pid; /* 0: none */
};
void lg_audit_falco(struct lg_json *j, const char *session, const char *agent,
		    const char *event, const struct lg_falco *f);

/*
 * Appends one line to path (created 0640, never through a symlink at its
 * last component: -ELOOP); fsyncs when sync. 0 or -errno.
 */
int lg_audit_append(const char *path, const char *line, bool sync);

#endif
