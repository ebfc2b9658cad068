// SPDX-License-Identifier: MIT
/*
 * A removal's facts only the session knows: its copy at the end of a move
 * to another filesystem (sess_moved_copy), an earlier version whose path
 * holds content again (sess_superseded), the paths a tool delete named
 * (sess_tool_delete_remember, tool_delete_of), a virtual environment's
 * own layout (lg_prov_in_venv), a compressor's original (transformed), an
 * archiver's (lg_prov_archived), what an archive the session wrote holds
 * (lg_prov_archive_holds), a build output a clean verb removes
 * (lg_prov_clean_output); gathered for a removal that would count by
 * sess_removal_facts. What lives on is provenance's (provenance/prov.h).
 */
#include <jansson.h>
#include <libgen.h>

#include "lib/cleanup.h"
#include "session_int.h"

/*
 * The source of a move to another filesystem is removed after the copy: is
 * its copy at the destination, the same type, size and modification time
 * (mv, cp -a and shutil.move keep it)? Then nothing is lost, and the copy
 * carries the pre-existing status on, so deleting it there counts.
 */
bool sess_moved_copy(struct lg_session *s, const char *path,
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
/*
 * An earlier version renamed away from its path (sed -i.bak, perl -i.orig,
 * an editor's backup) whose path holds content again: removing it leaves
 * the successor. Renamed away with nothing at its path (a trash folder):
 * its removal loses the data.
 */
bool sess_superseded(const struct lg_session *s, const struct lg_facts *f)
{
	struct lg_inode_key k = sess_inode_key(f);
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
void sess_tool_delete_remember(struct lg_session *s, const struct lg_event *ev,
			       uint64_t now)
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
	char sib[NAME_MAX + 16];
	const char *name, *suffix;
	LG_AUTOCLOSE int own = -1;
	int dirfd;

	if (!lg_transform_suffix(exe, 0))
		return false;
	dirfd = lg_prov_target_dir(ev, &own, &name);
	if (dirfd < 0)
		return false;
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
			  STATX_TYPE | STATX_SIZE | STATX_BTIME | STATX_CTIME |
				  STATX_INO,
			  &st) != 0)
			continue;
		sf.exists = true;
		sf.is_reg = S_ISREG(st.stx_mode);
		sf.size = (int64_t)st.stx_size;
		sf.has_btime = (st.stx_mask & STATX_BTIME) != 0;
		sf.btime_ns = sess_ns(st.stx_btime);
		sf.ctime_ns = sess_ns(st.stx_ctime);
		if (!lg_transform_sibling_fresh(&sf, s->info.start_real_ns,
						lg_real_ns()))
			continue;
		if (head_of(dirfd, unpack ? name : sib, head, sizeof(head),
			    &n) &&
		    lg_transform_magic(suffix, head, n)) {
			lg_dbg("%s: its content lives on in %s (%s)",
			       ev->target, sib, exe);
			sf.dev = makedev(st.stx_dev_major, st.stx_dev_minor);
			sf.ino = st.stx_ino;
			sess_inherits(s, &sf);
			return true;
		}
	}
	return false;
}

/*
 * An archive holds what is removed (provenance/archiver.c: the archiver's
 * own; provenance/archives.c: one the session wrote): it takes the
 * pre-existing status on.
 */
static bool archived(struct lg_session *s, const struct lg_event *ev,
		     const char *exe, int64_t size)
{
	struct lg_facts af;

	if (!lg_prov_archived(s->prov, ev, exe, size, &af))
		return false;
	sess_inherits(s, &af);
	return true;
}
static bool archive_holds(struct lg_session *s, const struct lg_event *ev,
			  const struct lg_facts *f)
{
	struct lg_facts af;

	if (!lg_prov_archive_holds(s->prov, ev, f, &af))
		return false;
	sess_inherits(s, &af);
	return true;
}

/*
 * The facts only the session can add to a removal that would count: a
 * tool delete's own, a venv's (provenance/venv.c), a clean verb's build
 * output (provenance/regen.c), a transform's (a compressor's or an
 * archiver's). Returns the tool delete it belongs to, or -1.
 */
int sess_removal_facts(struct lg_session *s, const struct lg_event *ev,
		       struct lg_facts *f)
{
	const struct lg_config *c = s->cfg;
	uint64_t now = lg_mono_ms();
	int td;

	if (lg_classify(ev->op, f, ev->target, NULL, c->ignore, c->n_ignore,
			s->info.start_real_ns) != LG_CLASS_DESTROY)
		return -1;
	f->unignored = true; /* DESTROY is decided past the ignore rules */
	td = tool_delete_of(s, ev->target, now);
	/* a command counted at its exec removes what it said (git push) */
	f->tool_deleted = td >= 0 || sess_exec_did(s, ev->pid, now);
	f->regenerable = lg_prov_in_venv(s->prov, ev->op, ev->target, now);
	f->cleaned = !f->tool_deleted && !f->regenerable &&
		     lg_prov_clean_output(s->prov, s->programs, ev, f);
	if (ev->op == LG_OP_UNLINK && f->is_reg && f->size > 0 &&
	    !f->tool_deleted && !f->regenerable && !f->cleaned) {
		char exe[64];

		sess_exe_of(s, ev->pid, EXE_RECENT, exe, sizeof(exe));
		f->transformed = transformed(s, ev, exe) ||
				 archived(s, ev, exe, f->size);
	}
	/* tar --remove-files, zip -m -r: the directories they archived */
	if (ev->op == LG_OP_RMDIR && f->is_dir && !f->tool_deleted &&
	    !f->regenerable && !f->cleaned) {
		char exe[64];

		sess_exe_of(s, ev->pid, EXE_RECENT, exe, sizeof(exe));
		f->transformed = archived(s, ev, exe, 0);
	}
	/* an archive the session wrote holds it: rm after tar czf (issue 41) */
	if ((ev->op == LG_OP_UNLINK || ev->op == LG_OP_RMDIR) &&
	    !f->transformed && !f->tool_deleted && !f->regenerable)
		f->transformed = archive_holds(s, ev, f);
	return td;
}
