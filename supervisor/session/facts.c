// SPDX-License-Identifier: MIT
/*
 * The facts the session's file handlers share, below them all: the
 * program doing an op (sess_exe_of) and whether it is this lgrun
 * (sess_our_binary), lgrun's own state (sess_protected_path), an inode's
 * key and what lineage says of it (sess_inode_key, sess_lineage_facts),
 * the guard's "has it come back?" (sess_restored) with git's removals of
 * content it does not hold (sess_lost_by_git), sess_under, sess_path_hash.
 */
#include "session_int.h"

/*
 * A nested lgrun writes its records into the same state directory by
 * rename: the same executable as this one (by inode, not by name) may.
 */
bool sess_our_binary(pid_t pid)
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
#define EXE_FRESH_MS 100
void sess_exe_of(struct lg_session *s, pid_t pid, int fresh, char *out,
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
			lg_prov_exe_name(pid, s->exes[i].exe,
					 sizeof(s->exes[i].exe));
			s->exes[i].read_ms = now;
		}
		lg_strtrunc(out, size, s->exes[i].exe);
		return;
	}
	lg_prov_exe_name(pid, out, size);
	s->exes[s->exes_next % n].read_ms = lg_mono_ms();
	s->exes[s->exes_next % n].pid = pid;
	lg_strtrunc(s->exes[s->exes_next % n].exe,
		    sizeof(s->exes[s->exes_next % n].exe), out);
	s->exes_next++;
}
uint64_t sess_path_hash(const char *p)
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
void sess_lost_by_git_add(struct lg_session *s, const char *path)
{
	s->lost_by_git[(s->lost_head + s->nlost) % LOST_BY_GIT] =
		sess_path_hash(path);
	if (s->nlost == LOST_BY_GIT)
		s->lost_head = (s->lost_head + 1) % LOST_BY_GIT;
	else
		s->nlost++;
}
bool sess_lost_by_git(const struct lg_session *s, const char *path)
{
	uint64_t h = sess_path_hash(path);

	for (size_t i = 0; i < s->nlost; i++)
		if (s->lost_by_git[i] == h)
			return true;
	return false;
}
int64_t sess_ns(struct statx_timestamp t)
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
	const char *slash = strrchr(target, '/'), *name = target;
	int dirfd = AT_FDCWD;
	struct statx st;
	bool same;

	if (op == LG_OP_UNLINK && s && sess_lost_by_git(s, target))
		return false;
	/* a device written over: its node there again is not its content */
	if (op == LG_OP_DEVICE_WRITE)
		return false;
	/* beside the attempt being decided: asked in its directory */
	if (s && s->feeding_at && slash &&
	    (size_t)(slash - target) == s->feeding_dirlen &&
	    strncmp(target, s->feeding_path, s->feeding_dirlen) == 0) {
		dirfd = s->feeding_dirfd;
		name = slash + 1;
	}
	if (statx(dirfd, name, trunc ? 0 : AT_SYMLINK_NOFOLLOW,
		  STATX_INO | STATX_SIZE | STATX_BTIME | STATX_CTIME |
			  STATX_MTIME,
		  &st) != 0)
		return false;
	/* still empty, or cut to a stub of what it held (issue 41) */
	if (trunc &&
	    (st.stx_size == 0 || lg_stub_of(id->size, (int64_t)st.stx_size)))
		return false;
	same = id->ino && st.stx_ino == id->ino &&
	       makedev(st.stx_dev_major, st.stx_dev_minor) == id->dev &&
	       sess_ns((st.stx_mask & STATX_BTIME) ?
			       st.stx_btime :
			       st.stx_ctime) == id->birth_ns;
	if (!same)
		return true; /* another file at the path: an overwrite */
	if (trunc && sess_ns(st.stx_mtime) != id->mtime_ns)
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
bool sess_protected_path(const struct lg_session *s, const char *path)
{
	return sess_under(path, s->info.state_dir) ||
	       lg_quarantine_path(s->quarantine, path) ||
	       strcmp(path, s->info.audit_path) == 0 ||
	       (s->info.metrics_path &&
		strcmp(path, s->info.metrics_path) == 0);
}
struct lg_inode_key sess_inode_key(const struct lg_facts *f)
{
	return (struct lg_inode_key){ f->dev, f->ino,
				      f->has_btime ? f->btime_ns : 0 };
}
/*
 * The file f now holds pre-existing content (a compressor's output, an
 * archiver's archive): removing or emptying it destroys that content, as
 * removing the original would have.
 */
void sess_inherits(struct lg_session *s, const struct lg_facts *f)
{
	struct lg_inode_key k = sess_inode_key(f);

	if (f->ino)
		lg_lineage_mark(s->content, &k, LG_INODE_INHERITED,
				LG_INODE_REWRITTEN);
}

/*
 * The name before the session of what path names (f: its facts, or NULL):
 * the inode's origin, or path taken back through its directories'
 * renames; into buf. buf, or NULL when path is that name or none is known.
 */
const char *sess_name_before(const struct lg_session *s,
			     const struct lg_facts *f, const char *path,
			     char *buf, size_t size)
{
	struct lg_inode_key k;

	if (f && f->exists && f->ino)
		k = sess_inode_key(f);
	return lg_lineage_name_before(s->content,
				      f && f->exists && f->ino ? &k : NULL,
				      path, buf, size) > 0 ?
		       buf :
		       NULL;
}

/* What lgrun saw happen to the inode, into its facts. */
void sess_lineage_facts(const struct lg_session *s, struct lg_facts *f)
{
	struct lg_inode_key k = sess_inode_key(f);
	unsigned fl;

	if (!f->exists || !f->ino)
		return;
	fl = lg_lineage_get(s->content, &k);
	f->inherited = fl & LG_INODE_INHERITED;
	f->rewritten = fl & LG_INODE_REWRITTEN;
	/* counted when it was left empty: its removal destroys nothing more */
	f->emptied = (fl & LG_INODE_EMPTIED) && !(fl & LG_INODE_COUNTED_EMPTY);
	if (fl & LG_INODE_COUNTED_EMPTY)
		f->inherited = false;
}
