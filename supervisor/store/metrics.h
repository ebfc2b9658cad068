/* SPDX-License-Identifier: MIT */
/*
 * Counters in Prometheus text format, in a file a node_exporter textfile
 * collector can read. Counts persist across runs: the file is read,
 * updated and replaced under a lock.
 *   lgrun_trips_total{agent,reason}
 *   lgrun_events_total{source}                 destructive attempts, tool calls, op results
 *   lgrun_shim_dropped_events_total            events the shim could not send
 *   lgrun_shim_refused_connections_total       peers outside the session's tree
 *   lgrun_shim_malformed_frames_total
 *   lgrun_gated_calls_total                    calls held for a verdict
 *   lgrun_flow_calls_total                     agent-to-agent calls allowed
 *   lgrun_flow_rejected_calls_total{reason}    refused ones by rule (and
 *                                              flow_no_work warnings)
 */
#ifndef LG_METRICS_H
#define LG_METRICS_H

#include <stddef.h>

struct lg_metric_inc {
	const char *name;
	const char *labels; /* label="value",... already escaped, or "" */
	unsigned long long n;
};

int lg_metrics_add(const char *path, const struct lg_metric_inc *inc, size_t n);

/* Escapes a label value as the text format wants. */
void lg_metrics_label(const char *s, char *out, size_t size);

int lg_metrics_count_trip(const char *path, const char *agent,
			  const char *reason);

#endif
