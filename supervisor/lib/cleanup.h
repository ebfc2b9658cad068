/* SPDX-License-Identifier: MIT */
/*
 * lgrun's one cleanup idiom for fds and allocations that a function owns
 * until it returns (as crun, bubblewrap and systemd do): the variable is
 * declared with LG_AUTOCLOSE / LG_AUTOFREE / LG_AUTOFCLOSE and released on
 * every return; what is handed on leaves with lg_steal_fd / lg_steal_ptr.
 *
 *	LG_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
 *
 *	if (fd < 0)
 *		return -errno;
 *	if (fstat(fd, &st) < 0)
 *		return -errno;		// closed here
 *	c->fd = lg_steal_fd(&fd);	// kept: not closed
 *	return 0;
 *
 * errno survives the release, so `return -errno` after a failed call
 * between them still says why.
 */
#ifndef LG_CLEANUP_H
#define LG_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void lg_closep(int *fd)
{
	if (*fd >= 0) {
		int e = errno;

		close(*fd);
		*fd = -1; /* closed once: a later call is a no-op */
		errno = e;
	}
}

static inline void lg_freep(void *p)
{
	int e = errno;

	free(*(void **)p);
	errno = e;
}

static inline void lg_fclosep(FILE **f)
{
	if (*f) {
		int e = errno;

		fclose(*f);
		errno = e;
	}
}

/* A variable released by fn(&var) on every return: the one spelling. */
#define LG_AUTO(fn) __attribute__((cleanup(fn)))

#define LG_AUTOCLOSE __attribute__((cleanup(lg_closep)))
#define LG_AUTOFREE __attribute__((cleanup(lg_freep)))
#define LG_AUTOFCLOSE __attribute__((cleanup(lg_fclosep)))

/*
 * The release of another library's type (a file's own, or jansson's below):
 *
 *	LG_DEFINE_CLEANUP(x509_freep, X509 *, X509_free)
 *	LG_AUTO(x509_freep) X509 *x = X509_new();
 *
 * releases a non-NULL pointer, and keeps errno as the helpers above do.
 */
#define LG_DEFINE_CLEANUP(name, type, release) \
	static inline void name(type *p)       \
	{                                      \
		if (*p) {                      \
			int e_ = errno;        \
			release(*p);           \
			errno = e_;            \
		}                              \
	}

#include <dirent.h>
/* A directory stream: LG_AUTOCLOSEDIR DIR *d = opendir(path); */
LG_DEFINE_CLEANUP(lg_closedirp, DIR *, closedir)
#define LG_AUTOCLOSEDIR LG_AUTO(lg_closedirp)

/*
 * jansson's values, in the files that include <jansson.h> before this
 * header (the others need not have jansson's headers).
 */
#ifdef JANSSON_H
LG_DEFINE_CLEANUP(lg_json_decrefp, json_t *, json_decref)
#define LG_AUTOJSON __attribute__((cleanup(lg_json_decrefp)))
#endif

/*
 * Holds an object's lock until the enclosing function returns: kind##_hold
 * takes it and returns the object, kind##_release(&held) leaves it (and
 * does what waits for the lock's release: a kill the session decided, a
 * state change the store tells). The one HOLD of the tree.
 */
#define LG_HOLD(kind, x)                                           \
	struct kind *lg_held_                                      \
		__attribute__((cleanup(kind##_release), unused)) = \
			kind##_hold(x)

/* The fd, no longer the variable's to close. */
static inline int lg_steal_fd(int *fd)
{
	int r = *fd;

	*fd = -1;
	return r;
}

/* The pointer, no longer the variable's to free. */
#define lg_steal_ptr(pp)                      \
	({                                    \
		__typeof__(*(pp)) p_ = *(pp); \
		*(pp) = NULL;                 \
		p_;                           \
	})

#endif
