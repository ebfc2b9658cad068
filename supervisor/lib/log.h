/* SPDX-License-Identifier: MIT */
#ifndef LG_LOG_H
#define LG_LOG_H

#include <stdbool.h>

enum lg_log_level { LG_LOG_ERROR, LG_LOG_WARN, LG_LOG_INFO, LG_LOG_DEBUG };

extern int lg_log_verbosity; /* messages above this level are dropped */
extern const char *lg_log_prog;
/* Lines end in CR LF (stderr is a terminal in raw mode). */
extern bool lg_log_crlf;

void lg_log(enum lg_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define lg_err(...) lg_log(LG_LOG_ERROR, __VA_ARGS__)
#define lg_warn(...) lg_log(LG_LOG_WARN, __VA_ARGS__)
#define lg_info(...) lg_log(LG_LOG_INFO, __VA_ARGS__)
#define lg_dbg(...) lg_log(LG_LOG_DEBUG, __VA_ARGS__)

#endif
