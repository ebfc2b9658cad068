// SPDX-License-Identifier: MIT
/*
 * Destructive file operations, the handlers of lg_session_feed(): a
 * file's (on_file: the facts lineage and the removal add, then
 * sess_decide, then what is kept), a rename's (sess_on_rename), a tool
 * delete's (on_tool_delete), what could not be read (sess_on_unreadable).
 * Calls go down to keep.c and removal.c, and from all three to facts.c.
 */
#include "../../preload/recog.h"
#include "session_int.h"

/*
 * A line of the quarantine's index that keeps no data (kind: "moved",
 * "made", "appended", "mode"), for a restore to act on: the inode's facts
 * f when known (its type, mode, size, times), path its name before the
 * session; a rename's from and now.
 */
static void note(struct lg_session *s, const char *kind, enum lg_op op,
		 pid_t pid, const struct lg_facts *f, const char *path,
		 const char *from, const char *now)
{
	struct lg_quarantine_who who = {
		.op = op,
		.pid = pid,
		.at_dirfd = -1,
		.origin = now && strcmp(kind, "moved") == 0 ? path : NULL
	};
	struct statx st = { 0 };
	char exe[64] = "";

	if (f && f->exists && f->ino) {
		st.stx_mask = STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE |
			      STATX_MTIME;
		st.stx_mode = (uint16_t)(f->mode       ? f->mode :
					 f->is_dir     ? S_IFDIR :
					 f->is_symlink ? S_IFLNK :
							 S_IFREG);
		st.stx_ino = f->ino;
		st.stx_dev_major = major(f->dev);
		st.stx_dev_minor = minor(f->dev);
		st.stx_size = (uint64_t)f->size;
		st.stx_mtime.tv_sec = f->mtime_ns / 1000000000;
		st.stx_mtime.tv_nsec = (uint32_t)(f->mtime_ns % 1000000000);
		who.dev = f->dev;
		who.ino = f->ino;
	}
	sess_exe_of(s, pid, EXE_CACHED, exe, sizeof(exe));
	who.exe = exe;
	who.audit_id = s->kept_audit_id[0] ? s->kept_audit_id : NULL;
	if (lg_quarantine_note(s->quarantine, kind, path, now, from, &st,
			       &who) < 0)
		s->not_kept_quiet++;
}

/*
 * Issue 40: what existed when the agent's turn began, unchanged since
 * (its inode's change time is older than the turn's start): a file the
 * session made in an earlier turn, or pre-existing data it changed then.
 */
bool sess_turn_old(const struct lg_session *s, const struct lg_facts *f)
{
	if (!s->turns.turn || !s->quarantine || !f->exists || !f->ino ||
	    f->fd_deleted)
		return false;
	/*
	 * A folder's change time is its entries' (rm -r empties it first):
	 * born before the turn, its metadata is what the turn found (a
	 * chmod of it is a line of its own)
	 */
	if (f->is_dir && f->has_btime)
		return f->btime_ns < s->turns.start_ns;
	return f->ctime_ns > 0 && f->ctime_ns < s->turns.start_ns;
}

/*
 * Such a file or folder changed again where the session's own rules put
 * nothing in the index (its lines still lines0): its version at the
 * turn's start kept (a removal's link, an overwrite's copy; an ignored
 * name's data is not copied) or its size, mode or name noted, quietly,
 * as the session's own ("own": a rewind to this turn puts it back, a
 * restore of the whole session leaves it). Never counted.
 */
static void turn_record(struct lg_session *s, struct lg_event *ev,
			const struct lg_facts *f, const char *path,
			const char *dst, unsigned lines0)
{
	enum lg_op op = ev->op;
	unsigned seen, what = 0;

	size_t n = strlen(s->project);

	if (!s->turns.turn || !f->exists || !f->ino || !n ||
	    strncmp(path, s->project, n) != 0 ||
	    (n > 1 && path[n] != '/' && path[n] != '\0'))
		return; /* not the project's: a rewind leaves it */
	seen = lg_turns_seen(&s->turns, f->dev, f->ino);
	/* once found, an inode is the turn's until its end (a rename bumps
	 * its change time, then a chmod of it is still recorded) */
	if (lg_quarantine_lines(s->quarantine) != lines0 ||
	    (!(seen & LG_TURN_FOUND) && !sess_turn_old(s, f)) ||
	    sess_protected_path(s, path) ||
	    (dst && sess_protected_path(s, dst)))
		return;
	if (dst)
		; /* every rename: a rewind takes each back one step */
	else if (op == LG_OP_CHMOD)
		what = LG_TURN_MODE;
	else if (ev->appends && op == LG_OP_OPEN_WRITE)
		what = LG_TURN_SIZE;
	else
		what = LG_TURN_CONTENT;
	/* recorded this turn already, or its content is (which says all) */
	if (what && (seen & (what | LG_TURN_CONTENT)))
		return;
	lg_quarantine_set_own(s->quarantine, true);
	s->keeping_own = true; /* not pre-existing data: no record says so */
	if (dst) {
		note(s, "moved", LG_OP_RENAME, ev->pid, f, path, path, dst);
	} else if (op == LG_OP_CHMOD) {
		note(s, "mode", op, ev->pid, f, path, NULL, NULL);
	} else if (ev->appends && op == LG_OP_OPEN_WRITE) {
		if (f->is_reg)
			note(s, "appended", op, ev->pid, f, path, NULL, NULL);
	} else if (op == LG_OP_UNLINK || op == LG_OP_RMDIR ||
		   op == LG_OP_RENAME) {
		sess_keep_anyway(s, ev, f);
	} else if ((op == LG_OP_OPEN_WRITE || op == LG_OP_OPEN_TRUNC ||
		    op == LG_OP_TRUNCATE || op == LG_OP_SHRINK) &&
		   f->is_reg && !sess_kernel_file(ev) &&
		   !lg_ignored(s->cfg->ignore, s->cfg->n_ignore, path, NULL)) {
		sess_keep_anyway(s, ev, f);
	} else {
		what = 0; /* nothing kept: judged again at its next change */
	}
	lg_quarantine_set_own(s->quarantine, false);
	s->keeping_own = false;
	lg_turns_mark(&s->turns, f->dev, f->ino, LG_TURN_FOUND | what);
}

/*
 * A pre-existing file or directory renamed from its name before the
 * session to now: so that a restore moves it back.
 */
static void keep_name(struct lg_session *s, pid_t pid, const struct lg_facts *f,
		      const char *before, const char *from, const char *now)
{
	if (s->quarantine && f->ino && strcmp(before, now) != 0)
		note(s, "moved", LG_OP_RENAME, pid, f, before, from, now);
}

/*
 * A name the session made (a file created, mkdir, symlink, a hard link or
 * a rename to a new name; f: the inode when known): so that a restore
 * sets it aside (issue 39).
 */
void sess_made(struct lg_session *s, pid_t pid, const char *path,
	       const struct lg_facts *f)
{
	if (s->quarantine && path[0] == '/' && !sess_protected_path(s, path))
		note(s, "made", LG_OP_MAKE, pid, f, path, NULL, NULL);
}

/* mkdir, symlink (LG_OP_MAKE): the name recorded, never refused but
 * in lgrun's state or a blocked session. */
static int on_make(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	if (s->blocked)
		return s->cfg->deny_errno;
	if (sess_protected_path(s, ev->target) && !sess_our_binary(ev->pid)) {
		s->st.denied++;
		v->verdict = LG_DENY;
		return s->cfg->deny_errno;
	}
	if (!ev->facts->exists)
		sess_made(s, ev->pid, ev->target, NULL);
	return 0;
}

/*
 * One side of a RENAME_EXCHANGE: what was at from is at to now. A
 * pre-existing file keeps its name from before; a directory, what lies
 * below it.
 */
static void exchanged(struct lg_session *s, pid_t pid, const struct lg_facts *f,
		      const char *from, const char *to)
{
	struct lg_inode_key k = sess_inode_key(f);

	if (!lg_facts_preexisting(f, s->info.start_real_ns))
		return;
	keep_name(s, pid, f, f->name_before ? f->name_before : from, from, to);
	if (f->is_dir)
		lg_lineage_dir_moved(
			s->content, f->name_before ? f->name_before : from, to);
	else if (lg_lineage_mark(s->content, &k, LG_INODE_MOVED_AWAY, 0) == 0)
		lg_lineage_set_origin(s->content, &k,
				      f->name_before ? f->name_before : from);
}
/*
 * A removal no rule counts that loses a pre-existing name all the same:
 * ignored, a symlink or an empty file, one of several hard links (not a
 * name the session gave the inode itself), a build output a clean verb
 * removes.
 */
static bool keep_anyway(const struct lg_session *s, enum lg_class cls,
			const struct lg_facts *f, const char *path)
{
	switch (cls) {
	case LG_CLASS_IGNORED:
	case LG_CLASS_NO_DATA:
	case LG_CLASS_REGENERABLE:
		return true;
	case LG_CLASS_LINKED: {
		struct lg_inode_key k = sess_inode_key(f);

		return !(lg_lineage_get(s->content, &k) & LG_INODE_ALIASED) ||
		       !f->name_before || strcmp(f->name_before, path) == 0;
	}
	default:
		return false;
	}
}

/*
 * A hard link (LG_OP_LINK): refused when it names lgrun's state (a kept
 * file given a name the tree could write through); else the inode, when
 * pre-existing, has a name the session made, and its origin is the name
 * it had before (the first of them).
 */
static int on_link(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	struct lg_facts f = *ev->facts;
	char before[PATH_MAX], exe[64];
	struct lg_inode_key k;

	if (s->blocked)
		return s->cfg->deny_errno;
	if ((sess_protected_path(s, ev->target) ||
	     sess_protected_path(s, ev->dst)) &&
	    !sess_our_binary(ev->pid)) {
		lg_prov_exe_name(ev->pid, exe, sizeof(exe));
		lg_warn("refused link %s -> %s by %s[%d]: lgrun's state is protected",
			ev->target, ev->dst, exe, ev->pid);
		s->st.denied++;
		v->verdict = LG_DENY;
		return s->cfg->deny_errno;
	}
	if (!f.exists || f.is_dir || !f.ino)
		return 0;
	if (!ev->dst_facts->exists)
		sess_made(s, ev->pid, ev->dst,
			  &f); /* a name more: the session's */
	sess_lineage_facts(s, &f);
	if (!lg_facts_preexisting(&f, s->info.start_real_ns))
		return 0;
	f.name_before =
		sess_name_before(s, &f, ev->target, before, sizeof(before));
	k = sess_inode_key(&f);
	if (lg_lineage_mark(s->content, &k, LG_INODE_ALIASED, 0) == 0)
		lg_lineage_set_origin(s->content, &k,
				      f.name_before ? f.name_before :
						      ev->target);
	return 0;
}

static int on_rename(struct lg_session *s, struct lg_event *ev,
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
	if (((sess_protected_path(s, src) && fs->exists) ||
	     sess_protected_path(s, dst)) &&
	    !sess_our_binary(pid)) {
		/* Moving the record away, or something over it. */
		lg_prov_exe_name(pid, exe, sizeof(exe));
		lg_warn("refused rename %s -> %s by %s[%d]: lgrun's state is protected",
			src, dst, exe, pid);
		sess_remember(s, lg_mono_ms(), pid, LG_OP_RENAME,
			      LG_CLASS_DESTROY, LG_DENY, exe,
			      sess_protected_path(s, src) ? src : dst);
		s->st.denied++;
		v->verdict = LG_DENY;
		return s->cfg->deny_errno;
	}
	if (!fs->exists)
		return 0; /* it fails */
	unsigned lines0 = lg_quarantine_lines(s->quarantine);

	if (ev->cross_fs) {
		/* EXDEV: mv and the like copy, then remove the source. */
		lg_lineage_move(s->content, src, dst, lg_mono_ms());
		lg_dbg("rename %s -> %s crosses filesystems", src, dst);
		return 0;
	}
	struct lg_facts f = *fs;
	struct lg_inode_key k = sess_inode_key(fs);
	char before[PATH_MAX], dbefore[PATH_MAX];
	bool src_pre, succeeds = false;

	sess_lineage_facts(s, &f);
	sess_lineage_facts(s, &d);
	src_pre = lg_facts_preexisting(&f, s->info.start_real_ns);
	/* the names from before the session, before this rename */
	f.name_before = sess_name_before(s, &f, src, before, sizeof(before));
	if (d.exists)
		d.name_before =
			sess_name_before(s, &d, dst, dbefore, sizeof(dbefore));
	if (flags & RENAME_EXCHANGE) {
		exchanged(s, pid, &f, src, dst);
		if (d.exists)
			exchanged(s, pid, &d, dst, src);
		return 0;
	}
	if (fs->is_dir) {
		/* what lies below it keeps its names from before */
		if (src_pre) {
			keep_name(s, pid, &f,
				  f.name_before ? f.name_before : src, src,
				  dst);
			lg_lineage_dir_moved(
				s->content, f.name_before ? f.name_before : src,
				dst);
		}
		turn_record(s, ev, fs, src, dst, lines0);
		return 0;
	}
	/*
	 * A new file takes the place of pre-existing content (sed -i, perl
	 * -i, a save by rename), there or at a path it was renamed away from
	 * (sed -i.bak): it carries that content's status on.
	 */
	if (d.exists && !d.is_dir && !(flags & RENAME_NOREPLACE))
		succeeds = lg_facts_preexisting(&d, s->info.start_real_ns);
	else if (!d.exists)
		succeeds = lg_lineage_refill(s->content, dst);
	/*
	 * Pre-existing data the rename replaces: kept first (sed -i, mv);
	 * a symlink, an empty file or an ignored name too, as at a removal.
	 */
	if (d.exists && !d.is_dir && s->quarantine && d.ino != f.ino &&
	    !(flags & RENAME_NOREPLACE)) {
		struct lg_event over = *ev;
		enum lg_class cls;
		int err;

		over.op = LG_OP_RENAME;
		over.target = dst;
		over.at = false;
		cls = lg_classify(LG_OP_UNLINK, &d, dst, NULL, s->cfg->ignore,
				  s->cfg->n_ignore, s->info.start_real_ns);
		if (succeeds && cls == LG_CLASS_DESTROY) {
			err = sess_keep(s, &over, &d);
			if (err)
				return err;
		} else if (keep_anyway(s, cls, &d, dst)) {
			sess_keep_anyway(s, &over, &d);
		}
		/* its body replaced by nothing or a stub: judged later */
		if (succeeds && cls == LG_CLASS_DESTROY && d.is_reg &&
		    d.size > 0 && f.is_reg &&
		    (f.size == 0 || lg_stub_of(d.size, f.size)))
			sess_emptied_add(s, &over, dst, &d, &f);
		turn_record(s, &over, ev->dst_facts, dst, NULL, lines0);
		lines0 = lg_quarantine_lines(s->quarantine);
	}
	if (!fs->is_dir)
		lg_prov_wrote(s->prov, dst);
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
		struct lg_inode_key dk = sess_inode_key(&d);

		if (lg_lineage_mark(s->content, &dk, LG_INODE_MOVED_AWAY, 0) ==
		    0)
			lg_lineage_set_origin(s->content, &dk,
					      d.name_before ? d.name_before :
							      dst);
	}
	/* the session's own file under a new name: that name is made */
	if (!src_pre) {
		turn_record(s, ev, fs, src, dst, lines0);
		if (!d.exists)
			sess_made(s, pid, dst, &f);
		/* zip writes ziXXXXXX, then renames it to its archive */
		lg_prov_archive_written(s->prov, dst);
	}
	/* Pre-existing content leaves its path: remember where it was. */
	if (src_pre)
		keep_name(s, pid, &f, f.name_before ? f.name_before : src, src,
			  dst);
	if (src_pre &&
	    lg_lineage_mark(s->content, &k, LG_INODE_MOVED_AWAY, 0) == 0) {
		lg_lineage_set_origin(s->content, &k,
				      f.name_before ? f.name_before : src);
		lg_lineage_vacate(s->content, src);
	}
	return 0;
}

/* LG_EV_RENAME: a rename, a hard link, a name made. */
int sess_on_rename(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	if (ev->op == LG_OP_LINK)
		return on_link(s, ev, v);
	if (ev->op == LG_OP_MAKE)
		return on_make(s, ev, v);
	return on_rename(s, ev, v);
}
/* Was this block device judged already (a slot), or not (NULL)? */
static bool device_seen(struct lg_session *s, const struct lg_facts *f)
{
	for (unsigned i = 0; i < SESS_DEVICES; i++)
		if (s->devices[i].rdev == f->rdev &&
		    s->devices[i].seq == f->blockdev_seq)
			return true;
	return false;
}

static void device_remember(struct lg_session *s, const struct lg_facts *f)
{
	struct sess_device *d = &s->devices[s->devices_next++ % SESS_DEVICES];

	d->rdev = f->rdev;
	d->seq = f->blockdev_seq;
}

/*
 * A block device opened for writing (issue 39 item 8: mkfs, dd of=,
 * wipefs). One that holds data is counted as a removal of pre-existing
 * data, once per device (mkfs opens it more than once: one decision), and
 * refused at the trip; nothing of it can be kept, which is said. One that
 * is empty at its first write-open loses nothing, and what is on it from
 * then on is the session's. Never kept: a device is not a file.
 */
static int on_device_write(struct lg_session *s, struct lg_event *ev,
			   const struct lg_facts *f,
			   struct lg_session_verdict *v)
{
	char exe[64] = "";
	int err;

	if (!f->rdev || !f->blockdev_probed || device_seen(s, f))
		return 0; /* not read (the open fails too), or judged */
	if (!f->blockdev_data) {
		lg_dbg("%s: an empty block device opened for writing: the session's from now",
		       ev->target);
		device_remember(s, f);
		return 0;
	}
	snprintf(s->device_holds, sizeof(s->device_holds), "%s",
		 f->blockdev_holds ? f->blockdev_holds : "data");
	err = sess_decide(s, ev->pid, LG_OP_DEVICE_WRITE, NULL, ev->target, f,
			  v);
	if (err)
		return err; /* refused: judged again if tried again */
	device_remember(s, f);
	if (v->cls != LG_CLASS_DESTROY)
		return 0;
	s->st.device_writes++;
	sess_exe_of(s, ev->pid, EXE_CACHED, exe, sizeof(exe));
	sess_audit_device(s, ev->pid, exe, ev->target);
	return 0;
}

/*
 * A pre-existing file's first append (its size then) or first chmod (its
 * mode then) in the session: a line of the index, so that a restore cuts
 * it back or sets its mode back (issue 39). Once per inode; nothing when
 * its content is kept already (an append) or it is lgrun's state.
 */
static int undo_record(struct lg_session *s, struct lg_event *ev,
		       struct lg_facts *f, unsigned mark)
{
	struct lg_inode_key k;
	char before[PATH_MAX];
	unsigned fl;

	if (sess_protected_path(s, ev->target) && !sess_our_binary(ev->pid)) {
		s->st.denied++;
		return s->cfg->deny_errno;
	}
	if (!s->quarantine || !f->exists || !f->ino || f->fd_deleted ||
	    (mark == LG_INODE_APPENDED && !f->is_reg) ||
	    (!f->is_reg && !f->is_dir) || sess_kernel_file(ev))
		return 0;
	sess_lineage_facts(s, f);
	if (!lg_facts_preexisting(f, s->info.start_real_ns))
		return 0;
	k = sess_inode_key(f);
	fl = lg_lineage_get(s->content, &k);
	if ((fl & mark) || (mark == LG_INODE_APPENDED &&
			    (fl & (LG_INODE_KEPT | LG_INODE_REWRITTEN))))
		return 0;
	if (lg_lineage_mark(s->content, &k, mark, 0) < 0)
		return 0;
	f->name_before =
		sess_name_before(s, f, ev->target, before, sizeof(before));
	note(s, mark == LG_INODE_APPENDED ? "appended" : "mode", ev->op,
	     ev->pid, f, f->name_before ? f->name_before : ev->target, NULL,
	     f->name_before ? ev->target : NULL);
	return 0;
}

/* A file's: the facts the edge read, classified here. */
static int on_file_judged(struct lg_session *s, struct lg_event *ev,
			  struct lg_session_verdict *v)
{
	const char *path = ev->target;
	struct lg_facts f = *ev->facts;
	enum lg_op op = ev->op;
	pid_t pid = ev->pid;
	char before[PATH_MAX];
	int err, td = -1;

	if (s->blocked) /* a trip while the target was read */
		return s->cfg->deny_errno;
	if (f.is_blockdev && (op == LG_OP_OPEN_WRITE || op == LG_OP_OPEN_TRUNC))
		return on_device_write(s, ev, &f, v);
	/* where an emptied file's body may live on (provenance/written.c) */
	if (op == LG_OP_OPEN_WRITE || op == LG_OP_OPEN_TRUNC)
		lg_prov_wrote(s->prov, path);
	/* an open that makes its target: the undo records the name */
	if (!f.exists && ev->creates &&
	    (op == LG_OP_OPEN_WRITE || op == LG_OP_OPEN_TRUNC))
		sess_made(s, pid, path, NULL);
	/* an archive written (tar czf, python's zipfile): remembered */
	if (ev->creates && (op == LG_OP_OPEN_WRITE || op == LG_OP_OPEN_TRUNC))
		lg_prov_archive_written(s->prov, path);
	/* an append, a chmod: what they change is recorded, never counted */
	if (ev->appends && op == LG_OP_OPEN_WRITE)
		return undo_record(s, ev, &f, LG_INODE_APPENDED);
	if (op == LG_OP_CHMOD)
		return undo_record(s, ev, &f, LG_INODE_MODE_KEPT);
	if (op == LG_OP_OPEN_WRITE ||
	    (op == LG_OP_OPEN_TRUNC && !(s->cfg->syscalls & LG_SC_OPEN_TRUNC)))
		return sess_on_write_open(s, ev, &f);
	/*
	 * A truncation to a length > 0 (truncate(2) by its path needs no
	 * open): not counted, but what it cuts off is kept as at an open.
	 */
	if (op == LG_OP_SHRINK && !f.fd_deleted) {
		err = sess_on_write_open(s, ev, &f);
		if (err)
			return err;
	}
	sess_lineage_facts(s, &f);
	/* identity is the inode and its name before the session */
	if (f.exists)
		f.name_before =
			sess_name_before(s, &f, path, before, sizeof(before));
	if ((op == LG_OP_UNLINK || op == LG_OP_RMDIR) && f.exists &&
	    sess_moved_copy(s, path, &f, lg_mono_ms()))
		f.moved = true;
	if (op == LG_OP_UNLINK && f.exists && f.ino)
		f.superseded = sess_superseded(s, &f);
	if ((op == LG_OP_UNLINK || op == LG_OP_RMDIR) && f.exists &&
	    !sess_protected_path(s, path))
		td = sess_removal_facts(s, ev, &f);
	{
		const char *slash = strrchr(path, '/');

		if (ev->at && ev->at_dirfd >= 0 && ev->at_name && slash &&
		    strcmp(slash + 1, ev->at_name) == 0) {
			s->feeding_at = true;
			s->feeding_dirfd = ev->at_dirfd;
			s->feeding_path = path;
			s->feeding_dirlen = (size_t)(slash - path);
		}
	}
	err = sess_decide(s, pid, op, NULL, path, &f, v);
	s->feeding_at = false;
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
		err = sess_keep(s, ev, &f);
	if (!err && v->cls == LG_CLASS_DESTROY && s->quarantine &&
	    (op == LG_OP_UNLINK || op == LG_OP_RMDIR ||
	     ((op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC) && f.size > 0 &&
	      !f.fd_deleted && !sess_kept_already(s, &f))))
		err = sess_keep(s, ev, &f);
	/*
	 * Every pre-existing name is kept, whatever counts: a link costs one
	 * syscall, and what the ignore rules cover may be data all the same
	 * (a target/ no build made), a symlink's target or an empty file's
	 * name may be what someone kept.
	 */
	if (!err && s->quarantine &&
	    (op == LG_OP_UNLINK || op == LG_OP_RMDIR) &&
	    keep_anyway(s, v->cls, &f, path))
		sess_keep_anyway(s, ev, &f);
	/* a clean's directories are empty of outputs once these are gone */
	if (!err && op == LG_OP_UNLINK && v->cls == LG_CLASS_IGNORED)
		lg_prov_regen_emptied(s->prov, path);
	/* From now on the file holds what the session writes into it. */
	if (!err && f.exists && f.ino &&
	    (op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC) && !f.fd_deleted) {
		struct lg_inode_key k = sess_inode_key(&f);

		lg_lineage_mark(s->content, &k, LG_INODE_REWRITTEN,
				LG_INODE_INHERITED);
	}
	return err;
}

/* A file's, and what its turn found of it (issue 40). */
static int on_file(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	unsigned lines0 = lg_quarantine_lines(s->quarantine);
	int err = on_file_judged(s, ev, v);

	if (!err && s->turns.turn && ev->facts->exists)
		turn_record(s, ev, ev->facts, ev->target, NULL, lines0);
	return err;
}
/* A tool's own name: Claude's "mcp__SERVER__NAME", a server's prefix. */
static const char *bare_name(const char *name)
{
	const char *u = NULL;

	for (const char *p = name; (p = strstr(p, "__")) != NULL; p += 2)
		u = p;
	return u && u[2] ? u + 2 : name;
}

/*
 * The model's own tool calls (issue 38, seed 000): a call whose name
 * matches [shim] gate_tools is a tool delete whatever runs it (a native
 * tool, a framework's function, MCP), counted here, at the proxy, first.
 * The shim's tools/call of the same name and target moments later is that
 * same decision (on_tool_delete): counted once.
 */
#define MODEL_DELETE_MS 120000
static bool model_decided(struct lg_session *s, const struct lg_event *ev,
			  uint64_t now)
{
	const char *name = bare_name(ev->tool ? ev->tool : "");

	for (unsigned i = 0; i < MODEL_DELETES; i++) {
		struct sess_model_delete *m = &s->model_deletes[i];

		if (!m->at_ms || m->used || now - m->at_ms > MODEL_DELETE_MS ||
		    strcmp(m->name, name) != 0 ||
		    strcmp(m->target, ev->target ? ev->target : "") != 0)
			continue;
		m->used = true;
		return true;
	}
	return false;
}

static int on_tool_delete(struct lg_session *s, struct lg_event *ev,
			  struct lg_session_verdict *v);

static int on_model_delete(struct lg_session *s, struct lg_event *ev,
			   struct lg_session_verdict *v)
{
	const char *name = bare_name(ev->tool ? ev->tool : "");
	const char *globs = s->cfg->gate_tools ? s->cfg->gate_tools :
						 LG_DEFAULT_GATE_TOOLS;
	const char *keys = s->cfg->target_keys ? s->cfg->target_keys :
						 LG_DEFAULT_TARGET_KEYS;
	struct sess_model_delete *m;
	char target[512];

	if (!*name || !lg_recog_name_in(name, strlen(name), globs))
		return 0;
	if (!ev->args || lg_canon_target(ev->args, strlen(ev->args), keys,
					 target, sizeof(target)) <= 0)
		snprintf(target, sizeof(target), "%s", name);
	ev->target = target;
	m = &s->model_deletes[s->model_deletes_next++ % MODEL_DELETES];
	m->at_ms = lg_mono_ms();
	m->used = false;
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->target, sizeof(m->target), "%s", target);
	return on_tool_delete(s, ev, v);
}

/* A tool-level delete held back by the shim: always counted. */
static int on_tool_delete(struct lg_session *s, struct lg_event *ev,
			  struct lg_session_verdict *v)
{
	int err;

	s->st.attempts++;
	if (s->blocked)
		return s->cfg->deny_errno;
	if (ev->source == LG_SRC_SHIM && model_decided(s, ev, lg_mono_ms())) {
		/* counted at the proxy: its server's removal is still this */
		lg_dbg("tool %s on %s by %s[%d]: the model's call, counted",
		       ev->tool, ev->target, ev->exe, ev->pid);
		sess_remember(s, lg_mono_ms(), ev->pid, LG_OP_TOOL_DELETE,
			      LG_CLASS_TOOL_DELETED, LG_ALLOW, ev->exe,
			      ev->target);
		sess_tool_delete_remember(s, ev, lg_mono_ms());
		return 0;
	}
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
	sess_tool_delete_remember(s, ev, lg_mono_ms());
	return 0;
}

int sess_on_destructive(struct lg_session *s, struct lg_event *ev,
			struct lg_session_verdict *v)
{
	if (ev->op == LG_OP_TOOL_DELETE && ev->source == LG_SRC_PROXY)
		return on_model_delete(s, ev, v);
	if (ev->op == LG_OP_TOOL_DELETE)
		return on_tool_delete(s, ev, v);
	if (ev->op == LG_OP_REMOTE_DELETE)
		return sess_on_remote_delete(s, ev, v);
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
	sess_exe_of(s, ev->pid, EXE_NOW, exe, sizeof(exe));
	lg_warn("refused %s by %s[%d]: cannot read its arguments (%s)",
		lg_op_name(ev->op), exe, ev->pid, strerror(ev->result));
	if ((ev->result == EPERM || ev->result == EACCES) &&
	    !s->unreadable_said) {
		/* lgrun could read its tree at start (lg_procmem_probe) */
		s->unreadable_said = true;
		lg_warn("%s[%d] closed its memory to lgrun (it made itself non-dumpable, or changed its user or capabilities): lgrun refuses the file removals and overwrites it cannot read, so that program's removals and overwrites fail with %s",
			exe, ev->pid, strerror(s->cfg->deny_errno));
	}
	sess_remember(s, lg_mono_ms(), ev->pid, ev->op, LG_CLASS_MISSING,
		      LG_DENY, exe, "(unreadable)");
	return s->cfg->deny_errno;
}
