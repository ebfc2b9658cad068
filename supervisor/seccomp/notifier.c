// SPDX-License-Identifier: MIT
/*
 * The notifier: its life (lg_notifier_new, lg_notifier_spare for a new
 * notify thread, lg_notifier_abandon, lg_notifier_free), its listener's
 * ioctls (lg_notifier_recv, notify_respond, notify_still_valid, the
 * synchronous wake-up) and what it is reading from its target, for the
 * main thread to see (notify_busy, lg_notifier_busy).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gitodb.h"
#include "lib/clock.h"
#include "notify_int.h"
#include "filter.h"

struct lg_notifier *lg_notifier_new(int fd, const struct lg_sink *sink)
{
	struct seccomp_notif_sizes sz = { 0 };
	struct lg_notifier *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->fd = fd;
	n->sink = *sink;
	/* The kernel's structs may be larger than our headers' ones. */
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		sz.seccomp_notif = sizeof(struct seccomp_notif);
		sz.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
	}
	n->req_size = sz.seccomp_notif > sizeof(*n->req) ? sz.seccomp_notif :
							   sizeof(*n->req);
	n->resp_size = sz.seccomp_notif_resp > sizeof(*n->resp) ?
			       sz.seccomp_notif_resp :
			       sizeof(*n->resp);
	n->req = calloc(1, n->req_size);
	n->resp = calloc(1, n->resp_size);
	n->odb = lg_gitodb_new(0);
	if (!n->req || !n->resp || !n->odb) {
		lg_notifier_free(n);
		return NULL;
	}
	return n;
}

struct lg_notifier *lg_notifier_spare(const struct lg_notifier *n)
{
	int fd = fcntl(n->fd, F_DUPFD_CLOEXEC, 3);
	struct lg_notifier *m;

	if (fd < 0)
		return NULL;
	m = lg_notifier_new(fd, &n->sink);
	if (!m) {
		close(fd);
		return NULL;
	}
	m->own_fd = true;
	m->exec_wanted = n->exec_wanted;
	m->on_exec = n->on_exec;
	m->exec_ctx = n->exec_ctx;
	return m;
}

void lg_notifier_abandon(struct lg_notifier *n)
{
	atomic_store(&n->abandoned, true);
}

bool lg_notifier_abandoned(struct lg_notifier *n)
{
	return atomic_load(&n->abandoned);
}

void lg_notifier_free(struct lg_notifier *n)
{
	if (!n)
		return;
	if (n->own_fd)
		close(n->fd);
	free(n->req);
	free(n->resp);
	lg_gitodb_free(n->odb);
	free(n);
}

int lg_notifier_fd(const struct lg_notifier *n)
{
	return n->fd;
}

int lg_notifier_sync_wakeup(struct lg_notifier *n)
{
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
		  SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0) == 0)
		return 1;
	return 0; /* EINVAL: older kernel, the loop works without it */
}

int notify_respond(struct lg_notifier *n, uint64_t id, int error)
{
	memset(n->resp, 0, n->resp_size);
	n->resp->id = id;
	if (error) {
		n->resp->error = -error;
	} else {
		n->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	}
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_SEND, n->resp) < 0) {
		/* ENOENT: the target died or its syscall was interrupted. */
		return errno == ENOENT ? 0 : -errno;
	}
	return 0;
}

bool notify_still_valid(struct lg_notifier *n, uint64_t id)
{
	return ioctl(n->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int lg_notifier_recv(struct lg_notifier *n)
{
	memset(n->req, 0, n->req_size);
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_RECV, n->req) < 0)
		return -errno;
	return 0;
}

bool lg_notifier_busy(struct lg_notifier *n, struct lg_busy *b)
{
	uint64_t since = atomic_load(&n->busy_since);

	if (!since)
		return false;
	b->id = atomic_load(&n->busy_id);
	b->pid = atomic_load(&n->busy_pid);
	b->op = atomic_load(&n->busy_op);
	b->since_ms = since;
	return since == atomic_load(&n->busy_since);
}

/* The notification n->req is read from its target from now on. */
void notify_busy(struct lg_notifier *n, const struct attempt *a)
{
	atomic_store(&n->busy_id, n->req->id);
	atomic_store(&n->busy_pid, (int)n->req->pid);
	atomic_store(&n->busy_op, (int)a->op);
	atomic_store(&n->busy_since, lg_mono_ms());
}
