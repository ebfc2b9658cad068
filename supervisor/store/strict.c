// SPDX-License-Identifier: MIT
/*
 * The state dir checked as ssh's StrictModes checks a home (issue 39, item
 * 11). Root appends audit records, markers and recordings there: a folder
 * another user owns or may write into, or a symlink they planted, turns
 * those writes into writes wherever that user chose. So: the dir and every
 * folder above it this user's or root's, writable by no one else (an
 * ancestor may be open to all when it is root's and sticky, as /tmp is),
 * walked a component at a time from "/" without following a symlink the
 * walk did not check (an ancestor's symlink is followed when it is this
 * user's or root's: /var/run; the dir itself never is one). What it holds
 * is then this user's or root's, not writable by others, and no symlink.
 * Once checked, no one else can change a name in it, so the files in it
 * are opened by path with O_NOFOLLOW.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/error.h"
#include "state.h"

#define FIX "or choose another --state-dir (LGRUN_STATE_DIR)"

/* Whom a folder on the way may belong to, and who may write into it. */
static int check_dir(const struct stat *st, const char *shown, bool last,
		     struct lg_error *err)
{
	uid_t me = geteuid();

	if (st->st_uid != me && st->st_uid != 0)
		return lg_error_set(
			err, EPERM,
			"%s belongs to uid %u: the state dir and every folder above it must be root's or this user's (uid %u): chown it, " FIX,
			shown, (unsigned)st->st_uid, (unsigned)me);
	if ((st->st_mode & 022) &&
	    (last || !(st->st_mode & S_ISVTX) || st->st_uid != 0))
		return lg_error_set(
			err, EPERM,
			"%s is writable by %s (mode %04o): another user could plant what lgrun writes through: chmod go-w %s, " FIX,
			shown, st->st_mode & 002 ? "everyone" : "its group",
			(unsigned)(st->st_mode & 07777), shown);
	return 0;
}

/* The next component of *rest (not "" nor "."), cut off in place. */
static char *next_component(char **rest)
{
	char *c;

	for (;;) {
		while (**rest == '/')
			(*rest)++;
		if (!**rest)
			return NULL;
		c = *rest;
		*rest += strcspn(*rest, "/");
		if (**rest)
			*(*rest)++ = '\0';
		if (strcmp(c, ".") != 0)
			return c;
	}
}

/* Whether what is left names nothing more than the folder reached. */
static bool at_end(const char *rest)
{
	for (;;) {
		rest += strspn(rest, "/");
		if (!*rest)
			return true;
		if (rest[0] != '.' || (rest[1] && rest[1] != '/'))
			return false;
		rest++;
	}
}

static void shown_add(char *shown, size_t size, const char *c)
{
	size_t n = strlen(shown);

	if (strcmp(c, "..") == 0) {
		char *s = strrchr(shown, '/');

		if (s && s != shown)
			*s = '\0';
		else
			snprintf(shown, size, "/");
		return;
	}
	snprintf(shown + n, size - n, "%s%s", n > 1 ? "/" : "", c);
}

int lg_state_open(const char *dir, bool create, struct lg_error *err)
{
	/* what is left to walk: the path, then a symlink's target before it */
	char buf[2 * PATH_MAX], link[PATH_MAX], tmp[2 * PATH_MAX];
	char shown[PATH_MAX] = "/";
	LG_AUTOCLOSE int fd = -1;
	char *rest = buf, *c;
	struct stat st;
	int links = 0, r;

	if (dir[0] != '/')
		return lg_error_set(
			err, EINVAL,
			"the state dir '%s' is not an absolute path: name it from / (a relative one would depend on where lgrun starts)",
			dir);
	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return lg_error_set(err, ENAMETOOLONG,
				    "the state dir %.200s...: path too long",
				    dir);
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return lg_error_set(err, errno, "/: %s", strerror(errno));
	r = check_dir(&st, "/", at_end(rest), err);
	if (r < 0)
		return r;
	while ((c = next_component(&rest))) {
		bool last = at_end(rest);
		int nfd;

		if (fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT || !create || strcmp(c, "..") == 0)
				return lg_error_set(
					err, errno, "%s%s%s: %s", shown,
					strcmp(shown, "/") ? "/" : "", c,
					strerror(errno));
			if (mkdirat(fd, c, 0750) < 0 && errno != EEXIST)
				return lg_error_set(
					err, errno,
					"cannot create the state directory %s: %s (" FIX
					")",
					dir, strerror(errno));
			if (fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) < 0)
				return lg_error_set(err, errno, "%s: %s", dir,
						    strerror(errno));
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t n;

			if (last)
				return lg_error_set(
					err, ELOOP,
					"%s is a symlink: name the folder itself, " FIX,
					dir);
			if (st.st_uid != geteuid() && st.st_uid != 0)
				return lg_error_set(
					err, EPERM,
					"%s%s%s is a symlink of uid %u, on the way to the state dir %s: remove it, " FIX,
					shown, strcmp(shown, "/") ? "/" : "", c,
					(unsigned)st.st_uid, dir);
			n = readlinkat(fd, c, link, sizeof(link) - 1);
			if (n <= 0 || ++links > 40)
				return lg_error_set(
					err, ELOOP,
					"the state dir %s: too many symlinks on the way",
					dir);
			link[n] = '\0';
			if (snprintf(tmp, sizeof(tmp), "%s/%s", link, rest) >=
			    (int)sizeof(tmp))
				return lg_error_set(
					err, ENAMETOOLONG,
					"the state dir %s: path too long", dir);
			memcpy(buf, tmp, strlen(tmp) + 1);
			rest = buf;
			if (link[0] == '/') {
				close(fd);
				fd = open("/",
					  O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0)
					return lg_error_set(err, errno, "/: %s",
							    strerror(errno));
				snprintf(shown, sizeof(shown), "/");
			}
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			return lg_error_set(
				err, ENOTDIR,
				"%s%s%s is not a folder: the state dir %s cannot be there: " FIX,
				shown, strcmp(shown, "/") ? "/" : "", c, dir);
		nfd = openat(fd, c,
			     O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			return lg_error_set(err, errno, "%s: %s", dir,
					    strerror(errno));
		close(fd);
		fd = nfd;
		shown_add(shown, sizeof(shown), c);
		if (fstat(fd, &st) < 0)
			return lg_error_set(err, errno, "%s: %s", shown,
					    strerror(errno));
		r = check_dir(&st, last ? dir : shown, last, err);
		if (r < 0)
			return r;
	}
	/* the folder reached, open for reading (O_PATH served the walk) */
	r = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r < 0)
		return lg_error_set(err, errno, "%s: %s", dir, strerror(errno));
	return r;
}

/*
 * One name in a checked folder (shown: its whole path): absent, or this
 * user's or root's own.
 */
static int check_entry(int dfd, const char *name, const char *shown, bool dir,
		       struct lg_error *err)
{
	uid_t me = geteuid();
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 :
					 lg_error_set(err, errno, "%s: %s",
						      shown, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return lg_error_set(err, ELOOP,
				    "%s is a symlink: remove it, " FIX, shown);
	if (st.st_uid != me && st.st_uid != 0)
		return lg_error_set(
			err, EPERM,
			"%s belongs to uid %u, not to this user (uid %u) nor root: remove it, " FIX,
			shown, (unsigned)st.st_uid, (unsigned)me);
	if (st.st_mode & 022)
		return lg_error_set(
			err, EPERM,
			"%s is writable by %s (mode %04o): chmod go-w %s, " FIX,
			shown, st.st_mode & 002 ? "everyone" : "its group",
			(unsigned)(st.st_mode & 07777), shown);
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		return lg_error_set(err, ENOTDIR,
				    "%s is not a %s: remove it, " FIX, shown,
				    dir ? "folder" : "regular file");
	return 0;
}

int lg_state_check_file(const char *path, struct lg_error *err)
{
	return check_entry(AT_FDCWD, path, path, false, err);
}

int lg_state_check_entries(int dfd, const char *dir, const char *id,
			   struct lg_error *err)
{
	static const struct {
		const char *name;
		bool dir;
	} top[] = {
		{ "sessions", true },
		{ "quarantine", true },
		{ "run", true },
		{ "bpf", true },
		{ "audit.jsonl", false },
		{ "lgrun.prom", false },
		{ "lgrun.prom.lock", false },
	};
	static const char *const in_sessions[] = { "json", "killed", "lost",
						   "events.jsonl",
						   "events.old.jsonl" };
	static const char *const in_quarantine[] = { "jsonl", "held" };
	char shown[2 * PATH_MAX], name[256];
	int r;

	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		snprintf(shown, sizeof(shown), "%s/%s", dir, top[i].name);
		r = check_entry(dfd, top[i].name, shown, top[i].dir, err);
		if (r < 0)
			return r;
	}
	if (!id)
		return 0;
	for (int sub = 0; sub < 2; sub++) {
		const char *where = sub ? "quarantine" : "sessions";
		LG_AUTOCLOSE int sfd =
			openat(dfd, where,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		size_t n = sub ? 2 : 5;

		if (sfd < 0)
			continue; /* not there yet: made by lgrun */
		for (size_t i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "%s.%s", id,
				 sub ? in_quarantine[i] : in_sessions[i]);
			snprintf(shown, sizeof(shown), "%s/%s/%s", dir, where,
				 name);
			r = check_entry(sfd, name, shown, false, err);
			if (r < 0)
				return r;
		}
		if (sub) {
			/* the session's own folder of kept files */
			snprintf(shown, sizeof(shown), "%s/%s/%s", dir, where,
				 id);
			r = check_entry(sfd, id, shown, true, err);
			if (r < 0)
				return r;
		}
	}
	return 0;
}
