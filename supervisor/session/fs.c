// SPDX-License-Identifier: MIT
#include <jansson.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include "lib/cleanup.h"
#include "session_int.h"

/*
 * A nested lgrun writes its records into the same state directory by
 * rename: the same executable as this one (by inode, not by name) may.
 */
static bool our_binary(pid_t pid)
{
	static dev_t dev;
	static ino_t ino;
	char p[64];
	struct stat st;

	if (!ino) {
		if (stat("/proc/self/exe", &st) < 0)
			return false;
		dev = st.st_dev;
		ino = st.st_ino;
	}
	snprintf(p, sizeof(p), "/proc/%d/exe", pid);
	return stat(p, &st) == 0 && st.st_ino == ino && st.st_dev == dev;
}
/*
 * The program doing an op. EXE_NOW reads it now (what a refusal or a trip
 * names). EXE_RECENT reads it unless it was read in the last EXE_FRESH_MS
 * (what counts names the program as it is, a process that execs from its
 * first op EXE_FRESH_MS after: rm -r removing 10,000 files reads it some
 * 10 times, not 10,000 at 1.9 us each; rules that depend on the program
 * read it themselves). EXE_CACHED: a process seen before keeps the name
 * read then (one that execs after its first op is named after its first
 * program).
 */
enum { EXE_CACHED, EXE_RECENT, EXE_NOW };
#define EXE_FRESH_MS 100
static void exe_of(struct lg_session *s, pid_t pid, int fresh, char *out,
		   size_t size)
{
	const size_t n = sizeof(s->exes) / sizeof(s->exes[0]);
	uint64_t now = fresh != EXE_CACHED ? lg_mono_ms() : 0;

	for (size_t i = 0; i < n; i++) {
		if (s->exes[i].pid != pid)
			continue;
		if (fresh == EXE_NOW ||
		    (fresh == EXE_RECENT &&
		     now - s->exes[i].read_ms >= EXE_FRESH_MS)) {
			sess_read_exe(pid, s->exes[i].exe,
				      sizeof(s->exes[i].exe));
			s->exes[i].read_ms = now;
		}
		snprintf(out, size, "%s", s->exes[i].exe);
		return;
	}
	sess_read_exe(pid, out, size);
	s->exes[s->exes_next % n].read_ms = lg_mono_ms();
	s->exes[s->exes_next % n].pid = pid;
	snprintf(s->exes[s->exes_next % n].exe,
		 sizeof(s->exes[s->exes_next % n].exe), "%s", out);
	s->exes_next++;
}
static uint64_t path_hash(const char *p)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	return h;
}
/*
 * A ring as large as any realistic volumetric window's entries: a path
 * forgotten here could again pass for an overwrite.
 */
static void lost_by_git_add(struct lg_session *s, const char *path)
{
	s->lost_by_git[(s->lost_head + s->nlost) % LOST_BY_GIT] =
		path_hash(path);
	if (s->nlost == LOST_BY_GIT)
		s->lost_head = (s->lost_head + 1) % LOST_BY_GIT;
	else
		s->nlost++;
}
bool sess_lost_by_git(const struct lg_session *s, const char *path)
{
	uint64_t h = path_hash(path);

	for (size_t i = 0; i < s->nlost; i++)
		if (s->lost_by_git[i] == h)
			return true;
	return false;
}
static int64_t ns(struct statx_timestamp t)
{
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}
/*
 * The guard's question: has a target removed earlier come back? Not where
 * git removed content its object database does not hold (reset --hard,
 * checkout -- f over changes): git writes the committed content there,
 * and the removed content is gone.
 */
bool sess_restored(void *ctx, const char *target, enum lg_op op,
		   const struct lg_target_id *id)
{
	const struct lg_session *s = ctx;
	bool trunc = op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC;
	struct statx st;
	bool same;

	if (op == LG_OP_UNLINK && s && sess_lost_by_git(s, target))
		return false;
	if (statx(AT_FDCWD, target, trunc ? 0 : AT_SYMLINK_NOFOLLOW,
		  STATX_INO | STATX_SIZE | STATX_BTIME | STATX_CTIME |
			  STATX_MTIME,
		  &st) != 0)
		return false;
	if (trunc && st.stx_size == 0)
		return false;
	same = id->ino && st.stx_ino == id->ino &&
	       makedev(st.stx_dev_major, st.stx_dev_minor) == id->dev &&
	       ns((st.stx_mask & STATX_BTIME) ? st.stx_btime : st.stx_ctime) ==
		       id->birth_ns;
	if (!same)
		return true; /* another file at the path: an overwrite */
	if (trunc && ns(st.stx_mtime) != id->mtime_ns)
		return true; /* truncated, then written again */
	/*
	 * The same file, as it was: either the op has not run yet (a
	 * parallel rm, allowed, waits in the kernel) and it counts, or it
	 * ran and failed (EACCES, EBUSY, EISDIR) and lost nothing. The
	 * thread that asked has finished it if it is asking again now;
	 * another thread's op has surely run after PENDING_MS.
	 */
	return id->tid == s->feeding_tid ||
	       lg_mono_ms() - id->at_ms > PENDING_MS;
}
bool sess_under(const char *path, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n && strncmp(path, dir, n) == 0 &&
	       (path[n] == '/' || path[n] == '\0');
}
static bool protected_path(const struct lg_session *s, const char *path)
{
	return sess_under(path, s->info.state_dir) ||
	       lg_quarantine_path(s->quarantine, path) ||
	       strcmp(path, s->info.audit_path) == 0 ||
	       (s->info.metrics_path &&
		strcmp(path, s->info.metrics_path) == 0);
}
static struct lg_inode_key inode_key(const struct lg_facts *f)
{
	return (struct lg_inode_key){ f->dev, f->ino,
				      f->has_btime ? f->btime_ns : 0 };
}
/* What lgrun saw happen to the inode, into its facts. */
static void lineage_facts(const struct lg_session *s, struct lg_facts *f)
{
	struct lg_inode_key k = inode_key(f);
	unsigned fl;

	if (!f->exists || !f->ino)
		return;
	fl = lg_lineage_get(s->content, &k);
	f->inherited = fl & LG_INODE_INHERITED;
	f->rewritten = fl & LG_INODE_REWRITTEN;
	f->emptied = fl & LG_INODE_EMPTIED;
}
/*
 * The source of a move to another filesystem is removed after the copy: is
 * its copy at the destination, the same type, size and modification time
 * (mv, cp -a and shutil.move keep it)? Then nothing is lost, and the copy
 * carries the pre-existing status on, so deleting it there counts.
 */
static bool moved_copy(struct lg_session *s, const char *path,
		       const struct lg_facts *f, uint64_t now_ms)
{
	char to[PATH_MAX + 1];
	struct statx st;
	int64_t mtime;

	if (lg_lineage_moved_to(s->content, path, now_ms, MOVE_MAX_AGE_MS, to,
				sizeof(to)) != 1)
		return false;
	if (statx(AT_FDCWD, to, AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_SIZE | STATX_MTIME | STATX_INO |
			  STATX_BTIME,
		  &st) < 0)
		return false;
	mtime = (int64_t)st.stx_mtime.tv_sec * 1000000000LL +
		st.stx_mtime.tv_nsec;
	if (f->is_dir ?
		    !S_ISDIR(st.stx_mode) :
		    (S_ISDIR(st.stx_mode) || (int64_t)st.stx_size != f->size ||
		     mtime != f->mtime_ns))
		return false;
	if (!f->is_dir && lg_facts_preexisting(f, s->info.start_real_ns)) {
		struct lg_inode_key k = {
			makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino,
			(st.stx_mask & STATX_BTIME) ?
				(int64_t)st.stx_btime.tv_sec * 1000000000LL +
					st.stx_btime.tv_nsec :
				0
		};

		lg_lineage_mark(s->content, &k, LG_INODE_INHERITED,
				LG_INODE_REWRITTEN);
	}
	lg_dbg("%s was moved to %s", path, to);
	return true;
}
static int keep(struct lg_session *s, const struct lg_event *ev,
		const struct lg_facts *f);

int sess_on_rename(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	const char *src = ev->target, *dst = ev->dst;
	const struct lg_facts *fs = ev->facts;
	struct lg_facts d = *ev->dst_facts;
	unsigned flags = ev->rename_flags;
	pid_t pid = ev->pid;
	char exe[64] = "";

	if (s->blocked)
		return s->cfg->deny_errno;
	s->st.renames++;
	if (((protected_path(s, src) && fs->exists) ||
	     protected_path(s, dst)) &&
	    !our_binary(pid)) {
		/* Moving the record away, or something over it. */
		sess_read_exe(pid, exe, sizeof(exe));
		lg_warn("refused rename %s -> %s by %s[%d]: lgrun's state is protected",
			src, dst, exe, pid);
		sess_remember(s, lg_mono_ms(), pid, LG_OP_RENAME,
			      LG_CLASS_DESTROY, LG_DENY, exe,
			      protected_path(s, src) ? src : dst);
		s->st.denied++;
		v->verdict = LG_DENY;
		return s->cfg->deny_errno;
	}
	if (!fs->exists)
		return 0; /* it fails */
	if (ev->cross_fs) {
		/* EXDEV: mv and the like copy, then remove the source. */
		lg_lineage_move(s->content, src, dst, lg_mono_ms());
		lg_dbg("rename %s -> %s crosses filesystems", src, dst);
		return 0;
	}
	if (fs->is_dir || (flags & RENAME_EXCHANGE))
		return 0;
	struct lg_facts f = *fs;
	struct lg_inode_key k = inode_key(fs);
	bool src_pre, succeeds = false;

	lineage_facts(s, &f);
	lineage_facts(s, &d);
	src_pre = lg_facts_preexisting(&f, s->info.start_real_ns);
	/*
	 * A new file takes the place of pre-existing content (sed -i, perl
	 * -i, a save by rename), there or at a path it was renamed away from
	 * (sed -i.bak): it carries that content's status on.
	 */
	if (d.exists && !d.is_dir && !(flags & RENAME_NOREPLACE))
		succeeds = lg_facts_preexisting(&d, s->info.start_real_ns);
	else if (!d.exists)
		succeeds = lg_lineage_refill(s->content, dst);
	/* Pre-existing data the rename replaces: kept first (sed -i, mv). */
	if (succeeds && d.exists && s->quarantine && d.ino != f.ino &&
	    lg_classify(LG_OP_UNLINK, &d, dst, NULL, s->cfg->ignore,
			s->cfg->n_ignore,
			s->info.start_real_ns) == LG_CLASS_DESTROY) {
		struct lg_event over = *ev;
		int err;

		over.op = LG_OP_RENAME;
		over.target = dst;
		over.at = false;
		err = keep(s, &over, &d);
		if (err)
			return err;
	}
	if (succeeds && !src_pre &&
	    lg_lineage_mark(s->content, &k, LG_INODE_INHERITED,
			    LG_INODE_REWRITTEN) == 0)
		lg_dbg("rename %s -> %s: pre-existing content carried on", src,
		       dst);
	/*
	 * The replaced file may live on under another name (perl -i.orig
	 * links the original to its backup first): an earlier version of
	 * dst.
	 */
	if (succeeds && d.nlink > 1) {
		struct lg_inode_key dk = inode_key(&d);

		if (lg_lineage_mark(s->content, &dk, LG_INODE_MOVED_AWAY, 0) ==
		    0)
			lg_lineage_set_origin(s->content, &dk, dst);
	}
	/* Pre-existing content leaves its path: remember where it was. */
	if (src_pre &&
	    lg_lineage_mark(s->content, &k, LG_INODE_MOVED_AWAY, 0) == 0) {
		lg_lineage_set_origin(s->content, &k, src);
		lg_lineage_vacate(s->content, src);
	}
	return 0;
}
/*
 * An earlier version renamed away from its path (sed -i.bak, perl -i.orig,
 * an editor's backup) whose path holds content again: removing it leaves
 * the successor. Renamed away with nothing at its path (a trash folder):
 * its removal loses the data.
 */
static bool superseded(const struct lg_session *s, const struct lg_facts *f)
{
	struct lg_inode_key k = inode_key(f);
	const char *origin;
	struct stat st;

	if (!(lg_lineage_get(s->content, &k) & LG_INODE_MOVED_AWAY))
		return false;
	origin = lg_lineage_origin(s->content, &k);
	if (!origin || lstat(origin, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size == 0)
		return false;
	return st.st_ino != f->ino || st.st_dev != f->dev;
}
/*
 * Pre-existing data about to be removed, let through: kept first (a hard
 * link of a file, a directory's metadata). What cannot be kept is let go
 * with a warning, or refused with on_full = deny.
 */
static int keep(struct lg_session *s, const struct lg_event *ev,
		const struct lg_facts *f)
{
	char exe[64] = "", msg[LG_SUMMARY_MAX];
	struct lg_quarantine_who who = {
		.op = ev->op,
		.pid = ev->pid,
		.dev = f->dev,
		.ino = f->ino,
		.at_dirfd = ev->at && ev->at_name && ev->at_name[0] ?
				    ev->at_dirfd :
				    -1,
		.at_name = ev->at ? ev->at_name : NULL,
	};
	int r;

	if (!f->exists || (ev->op != LG_OP_RMDIR) == f->is_dir ||
	    f->nonempty_dir)
		return 0; /* it fails */
	exe_of(s, ev->pid, EXE_CACHED, exe, sizeof(exe));
	who.exe = exe;
	if (ev->op == LG_OP_UNLINK && f->ino) {
		struct lg_inode_key k = inode_key(f);

		if (lg_lineage_get(s->content, &k) & LG_INODE_MOVED_AWAY)
			who.origin = lg_lineage_origin(s->content, &k);
	}
	if (!s->kept_audit_id[0])
		sess_reserve_quarantine_id(s);
	who.audit_id = s->kept_audit_id;
	if (ev->op == LG_OP_RMDIR)
		r = lg_quarantine_dir(s->quarantine, ev->target, &who);
	else if (ev->op == LG_OP_TRUNCATE || ev->op == LG_OP_OPEN_TRUNC ||
		 ev->op == LG_OP_OPEN_WRITE)
		r = lg_quarantine_copy(s->quarantine, ev->target, &who,
				       s->cfg->quarantine_max_copy);
	else
		r = lg_quarantine_link(s->quarantine, ev->target, &who);
	if (!r) {
		if (!s->kept_audited) {
			s->kept_audited = true;
			sess_audit_quarantine(s);
		}
		return 0;
	}
	snprintf(msg, sizeof(msg),
		 "%s of %s could not be kept in the quarantine (%s)%s",
		 lg_op_name(ev->op), ev->target,
		 r == -ENOSPC ?
			 "quarantine.max_bytes reached" :
		 r == -EDQUOT ?
			 "its filesystem is at quarantine.min_free" :
		 r == -EPERM ?
			 "the quarantine folder on its mount is refused" :
		 r == -EOVERFLOW ?
			 "all sessions together hold quarantine.max_total" :
			 strerror(-r),
		 s->cfg->quarantine_deny ? ": refused (on_full = deny)" :
					   ": let through (on_full = allow)");
	/* said a few times; the rest are counted in the end record */
	if (++s->not_kept <= 3)
		sess_warn(s, "quarantine", "not_kept", ev->pid, exe, msg);
	else if (s->not_kept == 4)
		lg_warn("further removals that cannot be kept are counted, not reported (see the session's end record)");
	if (!s->cfg->quarantine_deny)
		return 0;
	s->st.denied++;
	return s->cfg->deny_errno;
}

/*
 * An open for writing (keep_writes), or an O_TRUNC open that no rule
 * counts: the file's content from before the session is kept the first
 * time, and nothing is counted. An O_TRUNC open of such a file with data
 * empties it: a removal of it later counts as the removal of that data.
 */
/*
 * A file of the kernel's own filesystems (/proc, /sys, cgroups, tracing):
 * writing one is a request to the kernel, not data lgrun could keep.
 */
static bool kernel_file(const struct lg_event *ev)
{
	struct statfs sf;
	int r = ev->at && ev->at_name && ev->at_name[0] && ev->at_dirfd >= 0 ?
			fstatfs(ev->at_dirfd, &sf) :
			statfs(ev->target, &sf);

	if (r != 0)
		return false;
	switch ((unsigned long)sf.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case BPF_FS_MAGIC:
	case DEVPTS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

static int on_write_open(struct lg_session *s, struct lg_event *ev,
			 const struct lg_facts *facts)
{
	struct lg_facts f = *facts;
	struct lg_inode_key k;
	unsigned fl;
	int err;

	if (!f.exists || !f.is_reg || !f.ino || !s->quarantine ||
	    !s->cfg->quarantine_keep_writes)
		return 0; /* made now (O_CREAT), a device, a fifo */
	/* Forging the quarantine's index or its copies: refused. */
	if (protected_path(s, ev->target) && !our_binary(ev->pid)) {
		char exe[64];

		sess_read_exe(ev->pid, exe, sizeof(exe));
		lg_warn("refused a write to %s by %s[%d]: lgrun's state is protected",
			ev->target, exe, ev->pid);
		s->st.denied++;
		return s->cfg->deny_errno;
	}
	k = inode_key(&f);
	fl = lg_lineage_get(s->content, &k);
	if (fl & (LG_INODE_KEPT | LG_INODE_REWRITTEN | LG_INODE_INHERITED))
		return 0; /* kept already, or the session's content by now */
	if (!lg_facts_preexisting(&f, s->info.start_real_ns))
		return 0;
	if (lg_ignored(s->cfg->ignore, s->cfg->n_ignore, ev->target, NULL))
		return 0;
	if (lg_path_in_git_dir(ev->target)) {
		char exe[64];

		exe_of(s, ev->pid, EXE_RECENT, exe, sizeof(exe));
		if (lg_ignored(s->cfg->ignore, s->cfg->n_ignore, ev->target,
			       exe))
			return 0;
	}
	if (kernel_file(ev))
		return 0;
	{
		unsigned not_kept = s->not_kept;

		err = keep(s, ev, &f);
		if (err)
			return err;
		/* not kept, let through (on_full = allow): said, not counted */
		if (s->not_kept == not_kept)
			s->st.kept_writes++;
	}
	lg_lineage_mark(s->content, &k,
			LG_INODE_KEPT |
				(ev->op == LG_OP_OPEN_TRUNC && f.size > 0 ?
					 LG_INODE_EMPTIED :
					 0),
			0);
	lg_dbg("%s %s: its content from before the session is kept",
	       lg_op_name(ev->op), ev->target);
	return 0;
}

/* Its content from before the session is in the quarantine already. */
static bool kept_already(const struct lg_session *s, const struct lg_facts *f)
{
	struct lg_inode_key k = inode_key(f);

	return lg_lineage_get(s->content, &k) & LG_INODE_KEPT;
}

/*
 * One decision, several witnesses: an MCP delete_file is seen by the shim
 * (the tool delete, counted) and by seccomp (the server's unlink of the
 * path it got). The paths a tool delete named are remembered for
 * TOOL_DELETE_MS; the first removal of one of them in that time is the
 * same decision: kept, recorded, not counted again. One removal per call:
 * a call that names many files (delete_files) still has the others
 * counted, and a directory's contents removed under a path it named count
 * as before.
 */
#define TOOL_DELETE_MS 10000
static void tool_value_add(struct sess_tool_delete *t, const char *v)
{
	size_t n = strlen(v);

	if (t->n >= TOOL_VALUES || !n || n >= TOOL_VALUE_MAX || strchr(v, '\n'))
		return;
	memcpy(t->values[t->n++], v, n + 1);
}
static void tool_delete_remember(struct lg_session *s,
				 const struct lg_event *ev, uint64_t now)
{
	struct sess_tool_delete *t =
		&s->tool_deletes[s->tool_deletes_next % TOOL_DELETES];
	char seg[TOOL_VALUE_MAX];

	t->n = 0;
	t->used = false;
	if (ev->url && lg_url_last_segment(ev->url, seg, sizeof(seg)) == 0)
		tool_value_add(t, seg);
	if (ev->args) {
		json_t *root = json_loads(ev->args, 0, NULL), *v, *e;
		const char *k;
		size_t i;

		json_object_foreach(root, k, v)
		{
			if (json_is_string(v))
				tool_value_add(t, json_string_value(v));
			else if (json_is_array(v)) {
				json_array_foreach(v, i, e)
				{
					if (json_is_string(e))
						tool_value_add(
							t,
							json_string_value(e));
				}
			}
		}
		json_decref(root);
	}
	if (!t->n)
		return;
	t->at_ms = now;
	s->tool_deletes_next++;
}
/* The oldest recent tool delete that named path and has no removal yet. */
static int tool_delete_of(const struct lg_session *s, const char *path,
			  uint64_t now)
{
	int best = -1;

	for (int i = 0; i < TOOL_DELETES; i++) {
		const struct sess_tool_delete *t = &s->tool_deletes[i];

		if (!t->at_ms || t->used || now - t->at_ms > TOOL_DELETE_MS ||
		    (best >= 0 && s->tool_deletes[best].at_ms <= t->at_ms))
			continue;
		for (unsigned v = 0; v < t->n; v++)
			if (lg_tool_value_names(t->values[v], path)) {
				best = i;
				break;
			}
	}
	return best;
}

/*
 * A virtual environment (a directory with a pyvenv.cfg from before the
 * session at its top) is regenerable: removals in its own layout
 * (lg_venv_root) do not count. venv --clear and rm -rf remove pyvenv.cfg
 * too, in any order: a root seen is taken as one for VENV_GONE_MS after
 * its pyvenv.cfg was last seen. Answers are cached per directory
 * (VENV_DIRS, a ring), a "no" for VENV_ASK_MS: a venv's rm -rf of
 * thousands of files costs a stat per directory, not per file.
 */
#define VENV_ASK_MS 1000
#define VENV_GONE_MS 60000
static bool venv_dir(struct lg_session *s, const char *root, uint64_t now)
{
	uint64_t h = path_hash(root);
	struct sess_venv_dir *d = NULL;
	char cfg[PATH_MAX];
	struct statx st;

	for (size_t k = 0; k < VENV_DIRS && !d; k++)
		if (s->venv_dirs[k].checked_ms && s->venv_dirs[k].hash == h)
			d = &s->venv_dirs[k];
	if (d &&
	    now - (d->venv ? d->confirmed_ms : d->checked_ms) < VENV_ASK_MS)
		return d->venv;
	if (!d) {
		d = &s->venv_dirs[s->venv_next++ % VENV_DIRS];
		memset(d, 0, sizeof(*d));
		d->hash = h;
	}
	d->checked_ms = now;
	if (snprintf(cfg, sizeof(cfg), "%s/pyvenv.cfg", root) <
		    (int)sizeof(cfg) &&
	    statx(AT_FDCWD, cfg, AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_BTIME | STATX_CTIME, &st) == 0 &&
	    S_ISREG(st.stx_mode)) {
		struct lg_facts c = {
			.exists = true,
			.has_btime = (st.stx_mask & STATX_BTIME) != 0,
			.btime_ns = ns(st.stx_btime),
			.ctime_ns = ns(st.stx_ctime),
		};

		if (lg_facts_preexisting(&c, s->info.start_real_ns)) {
			d->venv = true;
			d->confirmed_ms = now;
			return true;
		}
	}
	if (d->venv && now - d->confirmed_ms < VENV_GONE_MS)
		return true; /* being taken apart */
	d->venv = false;
	return false;
}
static bool in_venv(struct lg_session *s, enum lg_op op, const char *path,
		    uint64_t now)
{
	char root[PATH_MAX];

	for (size_t i = 0; lg_venv_root(op, path, i, root, sizeof(root)); i++)
		if (venv_dir(s, root, now))
			return true;
	return false;
}

/*
 * gzip f writes f.gz, then removes f; gzip -d f.gz writes f, then removes
 * f.gz. Only a known compressor's removal (by its name), of a regular file
 * whose sibling (same directory, the name plus or minus the compressor's
 * suffix) was born in the session, changed in the last
 * LG_TRANSFORM_FRESH_NS, is not empty, and whichever of the two is the
 * compressed one starts with its format's magic. Anything else writing
 * f.gz and removing f (a loop of echo x > f.gz; rm f) still counts.
 */
static bool head_of(int dirfd, const char *name, unsigned char *head,
		    size_t size, size_t *n)
{
	int fd = openat(dirfd, name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
				O_CLOEXEC);
	struct stat st;
	ssize_t r = -1;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		r = read(fd, head, size);
	close(fd);
	if (r < 0)
		return false;
	*n = (size_t)r;
	return true;
}
static bool transformed(struct lg_session *s, const struct lg_event *ev,
			const char *exe)
{
	char dir[PATH_MAX], sib[NAME_MAX + 16];
	const char *name, *suffix;
	LG_AUTOCLOSE int own = -1;
	int dirfd;

	if (!lg_transform_suffix(exe, 0))
		return false;
	if (ev->at && ev->at_name && ev->at_name[0] && ev->at_dirfd >= 0) {
		dirfd = ev->at_dirfd;
		name = ev->at_name;
	} else {
		const char *slash = strrchr(ev->target, '/');

		if (!slash || (size_t)(slash - ev->target) >= sizeof(dir))
			return false;
		memcpy(dir, ev->target, (size_t)(slash - ev->target));
		dir[slash - ev->target] = '\0';
		own = open(dir[0] ? dir : "/",
			   O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (own < 0)
			return false;
		dirfd = own;
		name = slash + 1;
	}
	for (size_t i = 0; (suffix = lg_transform_suffix(exe, i)); i++) {
		size_t nl = strlen(name), sl = strlen(suffix);
		bool unpack = nl > sl && strcmp(name + nl - sl, suffix) == 0;
		unsigned char head[8];
		struct lg_facts sf = { 0 };
		struct statx st;
		size_t n = 0;

		if (nl + sl >= sizeof(sib))
			continue;
		if (unpack)
			snprintf(sib, sizeof(sib), "%.*s", (int)(nl - sl),
				 name);
		else
			snprintf(sib, sizeof(sib), "%s%s", name, suffix);
		if (statx(dirfd, sib, AT_SYMLINK_NOFOLLOW,
			  STATX_TYPE | STATX_SIZE | STATX_BTIME | STATX_CTIME,
			  &st) != 0)
			continue;
		sf.exists = true;
		sf.is_reg = S_ISREG(st.stx_mode);
		sf.size = (int64_t)st.stx_size;
		sf.has_btime = (st.stx_mask & STATX_BTIME) != 0;
		sf.btime_ns = ns(st.stx_btime);
		sf.ctime_ns = ns(st.stx_ctime);
		if (!lg_transform_sibling_fresh(&sf, s->info.start_real_ns,
						lg_real_ns()))
			continue;
		if (head_of(dirfd, unpack ? name : sib, head, sizeof(head),
			    &n) &&
		    lg_transform_magic(suffix, head, n)) {
			lg_dbg("%s: its content lives on in %s (%s)",
			       ev->target, sib, exe);
			return true;
		}
	}
	return false;
}

/*
 * The facts only the session can add to a removal that would count: a
 * tool delete's own, a venv's, a transform's. Returns the tool delete it
 * belongs to, or -1.
 */
static int removal_facts(struct lg_session *s, const struct lg_event *ev,
			 struct lg_facts *f)
{
	const struct lg_config *c = s->cfg;
	uint64_t now = lg_mono_ms();
	int td;

	if (lg_classify(ev->op, f, ev->target, NULL, c->ignore, c->n_ignore,
			s->info.start_real_ns) != LG_CLASS_DESTROY)
		return -1;
	td = tool_delete_of(s, ev->target, now);
	f->tool_deleted = td >= 0;
	f->regenerable = in_venv(s, ev->op, ev->target, now);
	if (ev->op == LG_OP_UNLINK && f->is_reg && f->size > 0 &&
	    !f->tool_deleted && !f->regenerable) {
		char exe[64];

		exe_of(s, ev->pid, EXE_RECENT, exe, sizeof(exe));
		f->transformed = transformed(s, ev, exe);
	}
	return td;
}

/* A file's: the facts the edge read, classified here. */
static int on_file(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	const char *path = ev->target;
	struct lg_facts f = *ev->facts;
	enum lg_op op = ev->op;
	pid_t pid = ev->pid;
	int err, td = -1;

	if (s->blocked) /* a trip while the target was read */
		return s->cfg->deny_errno;
	if (op == LG_OP_OPEN_WRITE ||
	    (op == LG_OP_OPEN_TRUNC && !(s->cfg->syscalls & LG_SC_OPEN_TRUNC)))
		return on_write_open(s, ev, &f);
	lineage_facts(s, &f);
	if ((op == LG_OP_UNLINK || op == LG_OP_RMDIR) && f.exists &&
	    moved_copy(s, path, &f, lg_mono_ms()))
		f.moved = true;
	if (op == LG_OP_UNLINK && f.exists && f.ino)
		f.superseded = superseded(s, &f);
	if ((op == LG_OP_UNLINK || op == LG_OP_RMDIR) && f.exists &&
	    !protected_path(s, path))
		td = removal_facts(s, ev, &f);
	err = sess_decide(s, pid, op, path, &f, v);
	if (td >= 0 && v->cls == LG_CLASS_TOOL_DELETED)
		s->tool_deletes[td].used = true;
	/*
	 * Keep first: what is not counted because it lives on elsewhere or
	 * was counted as a tool delete is still removed from its path.
	 */
	if (!err && s->quarantine &&
	    (v->cls == LG_CLASS_TRANSFORMED ||
	     v->cls == LG_CLASS_TOOL_DELETED) &&
	    (op == LG_OP_UNLINK || op == LG_OP_RMDIR))
		err = keep(s, ev, &f);
	if (!err && v->cls == LG_CLASS_DESTROY && s->quarantine &&
	    (op == LG_OP_UNLINK || op == LG_OP_RMDIR ||
	     ((op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC) && f.size > 0 &&
	      !f.fd_deleted && !kept_already(s, &f))))
		err = keep(s, ev, &f);
	/* From now on the file holds what the session writes into it. */
	if (!err && f.exists && f.ino &&
	    (op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC) && !f.fd_deleted) {
		struct lg_inode_key k = inode_key(&f);

		lg_lineage_mark(s->content, &k, LG_INODE_REWRITTEN,
				LG_INODE_INHERITED);
	}
	return err;
}
int sess_decide(struct lg_session *s, pid_t pid, enum lg_op op,
		const char *path, const struct lg_facts *f,
		struct lg_session_verdict *v)
{
	const struct lg_config *c = s->cfg;
	struct lg_guard_env env = { lg_mono_ms(), sess_restored, s, s->shared,
				    NULL };
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .source = LG_SRC_SECCOMP,
			       .op = op,
			       .pid = pid,
			       .target = path,
			       .id = { f->dev, f->ino,
				       f->has_btime ? f->btime_ns : f->ctime_ns,
				       f->mtime_ns, pid, env.now_ms } };
	struct lg_findings out;
	char exe[64] = "";
	const char *scoped = NULL; /* exe, when it is the program it names */

	s->st.attempts++;
	if (protected_path(s, path) && f->exists) {
		/* The agent must not erase its own record or lift its block. */
		sess_read_exe(pid, exe, sizeof(exe));
		lg_warn("refused %s %s by %s[%d]: lgrun's state is protected",
			lg_op_name(op), path, exe, pid);
		sess_remember(s, env.now_ms, pid, op, LG_CLASS_DESTROY, LG_DENY,
			      exe, path);
		s->st.denied++;
		v->verdict = LG_DENY;
		return c->deny_errno;
	}
	ev.cls = lg_classify(op, f, path, NULL, c->ignore, c->n_ignore,
			     s->info.start_real_ns);
	v->cls = ev.cls;
	/*
	 * The program is read only when a scoped rule could apply (git in
	 * .git) or a removal that would count may be git's (recoverable, or
	 * not to be taken for an overwrite), when something is to be
	 * reported, or with -vv: it costs a readlink on the hot path.
	 */
	if (ev.cls == LG_CLASS_DESTROY &&
	    lg_classify_needs_program(c->ignore, c->n_ignore, op, f, path)) {
		/*
		 * As read in the last 100 ms: a process that just exec'd git
		 * counts as what it was (counted, the safe side); one that
		 * exec'd away from git is git's only where git's objects hold
		 * the content (what makes git's removals recoverable).
		 */
		exe_of(s, pid, EXE_RECENT, exe, sizeof(exe));
		ev.exe = exe;
		scoped = lg_programs_is(s->programs, exe, pid) ? exe : NULL;
		ev.cls = lg_classify(op, f, path, scoped, c->ignore,
				     c->n_ignore, s->info.start_real_ns);
		v->cls = ev.cls;
	} else if (lg_log_verbosity >= LG_LOG_DEBUG) {
		sess_read_exe(pid, exe, sizeof(exe));
		ev.exe = exe;
	}
	if (ev.cls == LG_CLASS_DESTROY && s->store_up &&
	    !s->store_up(s->store_ctx))
		return sess_store_gate(s, pid, exe); /* not counted: refused */
	if (ev.cls == LG_CLASS_DESTROY)
		s->st.counted++;
	else if (ev.cls == LG_CLASS_RECOVERABLE)
		s->st.recoverable++;
	else if (ev.cls == LG_CLASS_MOVED)
		s->st.moved++;
	if (lg_classify_lost_by_git(op, ev.cls, path, scoped))
		lost_by_git_add(s, path);
	s->feeding_tid = pid;
	v->verdict = sess_feed(s, s->guard, &ev, &env, &out);
	s->feeding_tid = 0;
	if (!exe[0]) /* the target waits: still there */
		exe_of(s, pid,
		       v->verdict != LG_ALLOW	  ? EXE_NOW :
		       ev.cls == LG_CLASS_DESTROY ? EXE_RECENT :
						    EXE_CACHED,
		       exe, sizeof(exe));
	sess_remember(s, env.now_ms, pid, op, ev.cls, v->verdict, exe, path);
	lg_dbg("%s %s (%s) by %s[%d]: %s", lg_op_name(op), path,
	       lg_class_name(ev.cls), exe, pid, lg_verdict_name(v->verdict));
	if (v->verdict == LG_ALLOW)
		return ev.cls == LG_CLASS_DESTROY ?
			       sess_store_gate(s, pid, exe) :
			       0;
	return sess_act(s, &out, op, pid, exe, path, v);
}
/* A tool-level delete held back by the shim: always counted. */
static int on_tool_delete(struct lg_session *s, struct lg_event *ev,
			  struct lg_session_verdict *v)
{
	int err;

	s->st.attempts++;
	if (s->blocked)
		return s->cfg->deny_errno;
	if (s->store_up && !s->store_up(s->store_ctx))
		/* not counted: refused */
		return sess_store_gate(s, ev->pid, ev->exe);
	ev->cls = LG_CLASS_DESTROY;
	s->st.counted++;
	{
		struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared,
					    NULL };
		struct lg_findings out;

		v->verdict = sess_feed(s, s->guard, ev, &env, &out);
		sess_remember(s, env.now_ms, ev->pid, LG_OP_TOOL_DELETE,
			      ev->cls, v->verdict, ev->exe, ev->target);
		lg_dbg("tool %s on %s by %s[%d]: %s", ev->tool, ev->target,
		       ev->exe, ev->pid, lg_verdict_name(v->verdict));
		if (v->verdict != LG_ALLOW)
			return sess_act(s, &out, LG_OP_TOOL_DELETE, ev->pid,
					ev->exe, ev->target, v);
	}
	err = sess_store_gate(s, ev->pid, ev->exe);
	if (err)
		return err;
	/* let through: its server's removal of that path is this decision */
	tool_delete_remember(s, ev, lg_mono_ms());
	return 0;
}

int sess_on_destructive(struct lg_session *s, struct lg_event *ev,
			struct lg_session_verdict *v)
{
	if (ev->op == LG_OP_TOOL_DELETE)
		return on_tool_delete(s, ev, v);
	if (!ev->facts || !ev->target)
		return s->cfg->deny_errno; /* a source's bug: never let it go */
	return on_file(s, ev, v);
}

int sess_on_unreadable(struct lg_session *s, struct lg_event *ev,
		       struct lg_session_verdict *v)
{
	char exe[64];

	s->st.unreadable++;
	s->st.denied++;
	v->verdict = LG_DENY;
	exe_of(s, ev->pid, EXE_NOW, exe, sizeof(exe));
	lg_warn("refused %s by %s[%d]: cannot read its arguments (%s)",
		lg_op_name(ev->op), exe, ev->pid, strerror(ev->result));
	sess_remember(s, lg_mono_ms(), ev->pid, ev->op, LG_CLASS_MISSING,
		      LG_DENY, exe, "(unreadable)");
	return s->cfg->deny_errno;
}
