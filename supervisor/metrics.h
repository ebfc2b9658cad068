/* SPDX-License-Identifier: MIT */
/*
 * lgrun_trips_total{agent,reason} in Prometheus text format, in a file a
 * node_exporter textfile collector can read. Counts persist across runs:
 * the file is read, updated and replaced under a lock.
 */
#ifndef LG_METRICS_H
#define LG_METRICS_H

int lg_metrics_count_trip(const char *path, const char *agent,
			  const char *reason);

#endif
