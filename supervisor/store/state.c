// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/audit.h"
#include "config/config.h"
#include "lib/error.h"
#include "lib/json.h"
#include "lib/atomic.h"
#include "state.h"

int lg_state_dir_fallback(char *out, size_t size)
{
	int n = snprintf(out, size, "/tmp/lgrun-%u", (unsigned)geteuid());

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/*
 * Whether path is a folder, or could be made: its nearest existing
 * ancestor is a folder this user may write into.
 */
static bool creatable(const char *path)
{
	char p[PATH_MAX];
	struct stat st;
	char *slash;

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return false;
	while (stat(p, &st) < 0) {
		if (errno != ENOENT)
			return false;
		slash = strrchr(p, '/');
		if (!slash || slash == p)
			return access("/", W_OK | X_OK) == 0;
		*slash = '\0';
	}
	return S_ISDIR(st.st_mode) && access(p, W_OK | X_OK) == 0;
}

static const char *cfg_dir(const struct lg_config *cfg)
{
	return cfg ? cfg->state_dir : NULL;
}

int lg_state_dir_resolve(const char *cli, const struct lg_config *cfg,
			 char *out, size_t size, struct lg_error *err)
{
	const char *env = getenv("LGRUN_STATE_DIR");
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	const char *from = NULL;
	int n;

	if (cli && !*cli)
		return lg_error_set(
			err, EINVAL,
			"--state-dir '': empty: name a folder (an absolute path)");
	if (xdg && *xdg != '/')
		xdg = NULL; /* the XDG specification: a relative one is ignored */
	if (cli)
		n = snprintf(out, size, "%s", from = cli);
	else if (env && *env)
		n = snprintf(out, size, "%s", from = env);
	else if (cfg && cfg->state_dir)
		n = snprintf(out, size, "%s", from = cfg->state_dir);
	else if (geteuid() == 0)
		n = snprintf(out, size, "/var/lib/lgrun");
	else if (xdg && *xdg)
		n = snprintf(out, size, "%s/lgrun", xdg);
	else if (home && *home)
		n = snprintf(out, size, "%s/.local/state/lgrun", home);
	else
		n = -1;
	if (n >= 0 && (size_t)n >= size)
		return lg_error_set(err, ENAMETOOLONG,
				    "the state dir %.200s...: path too long",
				    out);
	/*
	 * On the command line or in the environment, a relative folder is
	 * where the user stands (as every tool's path argument), made
	 * absolute once, here; in the configuration file it means nothing
	 * sure (where lgrun starts): refused.
	 */
	if (from && *from != '/' && from != cfg_dir(cfg)) {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return lg_error_set(
				err, errno,
				"the state dir '%s' (%s) is relative, and the current directory cannot be read",
				from,
				from == cli ? "--state-dir" :
					      "LGRUN_STATE_DIR");
		n = snprintf(out, size, "%s/%s", strcmp(cwd, "/") ? cwd : "",
			     from);
		if (n < 0 || (size_t)n >= size)
			return lg_error_set(
				err, ENAMETOOLONG,
				"the state dir %.200s...: path too long", out);
		from = out;
	}
	if (from && *from != '/')
		return lg_error_set(
			err, EINVAL,
			"the state dir '%s' (%s) is not an absolute path: name it from / (a relative one would depend on where lgrun starts)",
			from,
			from == cli ? "--state-dir" :
			from == env ? "LGRUN_STATE_DIR" :
				      "guard.state_dir");
	/*
	 * A user with no home it may write (docker run -u 1000 with no such
	 * user in the image: HOME=/), or a relative one: a private folder in
	 * /tmp instead.
	 */
	if (n < 0 ||
	    (!from && geteuid() != 0 && (*out != '/' || !creatable(out)))) {
		if (lg_state_dir_fallback(out, size) < 0)
			return lg_error_set(err, ENAMETOOLONG,
					    "no state directory");
		return 1;
	}
	return 0;
}

int lg_state_prepare_private(const char *dir)
{
	struct stat st;
	int fd, r = 0;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (st.st_uid != geteuid() || (st.st_mode & 077))
		r = -EPERM; /* another user's, or open to others */
	else if (mkdirat(fd, "sessions", 0700) < 0 && errno != EEXIST)
		r = -errno;
	close(fd);
	return r;
}

bool lg_session_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 128 || id[0] == '.')
		return false;
	for (const char *c = id; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || strchr("._:@+-", *c))
			continue;
		return false;
	}
	return true;
}

static int session_path(const char *dir, const char *id, const char *ext,
			char *out, size_t size)
{
	int n = snprintf(out, size, "%s/sessions/%s.%s", dir, id, ext);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int lg_state_killed(const char *dir, const char *id, char *buf, size_t size)
{
	char p[PATH_MAX];
	ssize_t r;
	int fd;

	if (session_path(dir, id, "killed", p, sizeof(p)) < 0)
		return -ENAMETOOLONG;
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = read(fd, buf, size - 1);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	return 1;
}

/* Writes path all or nothing (lg_write_atomic), text and a newline. */
static int write_atomic(const char *path, const char *text, bool sync)
{
	return lg_write_atomic_bytes(path, 0640, sync, text, strlen(text),
				     true);
}

int lg_state_mark_killed(const char *dir, const char *id, const char *json)
{
	char p[PATH_MAX];

	if (session_path(dir, id, "killed", p, sizeof(p)) < 0)
		return -ENAMETOOLONG;
	return write_atomic(p, json, true);
}

int lg_state_reset(const char *dir, const char *id)
{
	char p[PATH_MAX];

	if (session_path(dir, id, "killed", p, sizeof(p)) < 0)
		return -ENAMETOOLONG;
	return unlink(p) < 0 ? -errno : 0;
}

int lg_state_write_session(const char *dir, const char *id, const char *json)
{
	char p[PATH_MAX];

	if (session_path(dir, id, "json", p, sizeof(p)) < 0)
		return -ENAMETOOLONG;
	/*
	 * One line appended per state change, the last one current. An append
	 * costs nothing much; replacing a file on ext4 forces its data out
	 * (auto_da_alloc), a millisecond on every start and exit. Kept small.
	 */
	{
		struct stat st;

		if (stat(p, &st) == 0 && st.st_size > (1 << 16))
			return write_atomic(p, json, false);
	}
	return lg_audit_append(p, json, false);
}

int lg_state_last(const char *dir, const char *id, char *buf, size_t size)
{
	char p[PATH_MAX], line[8192];
	FILE *f;
	int fd;

	buf[0] = '\0';
	if (session_path(dir, id, "json", p, sizeof(p)) < 0)
		return -ENAMETOOLONG;
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return -e;
	}
	while (fgets(line, sizeof(line), f))
		if (line[0] == '{')
			snprintf(buf, size, "%s", line);
	fclose(f);
	return 0;
}

bool lg_state_orphaned(const char *line)
{
	char state[32], pid[16];
	long p;

	lg_json_field(line, "state", state, sizeof(state));
	lg_json_field(line, "lgrun_pid", pid, sizeof(pid));
	p = atol(pid);
	return strcmp(state, "running") == 0 && p > 1 &&
	       kill((pid_t)p, 0) < 0 && errno == ESRCH;
}

bool lg_state_running(const char *dir, const char *id)
{
	char line[8192], state[32], pid[16];
	long p;

	if (lg_state_last(dir, id, line, sizeof(line)) < 0)
		return false;
	lg_json_field(line, "state", state, sizeof(state));
	lg_json_field(line, "lgrun_pid", pid, sizeof(pid));
	p = atol(pid);
	/* another user's lgrun (EPERM) runs too */
	return strcmp(state, "running") == 0 && p > 1 &&
	       (kill((pid_t)p, 0) == 0 || errno != ESRCH);
}

int lg_state_claim_lost(const char *dir, const char *id, const char *by)
{
	char p[PATH_MAX];
	int fd;

	if (session_path(dir, id, "lost", p, sizeof(p)) < 0)
		return -ENAMETOOLONG;
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0640);
	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;
	if (write(fd, by, strlen(by)) < 0) {
		/* the claim is the file; its text only says who */
	}
	close(fd);
	return 1;
}
