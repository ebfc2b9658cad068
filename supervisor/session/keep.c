// SPDX-License-Identifier: MIT
/*
 * What the quarantine keeps of a file before the tree's op runs: a
 * removal's target (sess_keep), a file's content from before the session
 * at its first open for writing (sess_on_write_open; never a file of the
 * kernel's own filesystems), and whether it is kept already
 * (sess_kept_already).
 */
#include <linux/magic.h>
#include <sys/vfs.h>

#include "session_int.h"

/*
 * Pre-existing data about to be removed, let through: kept first (a hard
 * link of a file, a directory's metadata). What cannot be kept is let go
 * with a warning, or refused with on_full = deny; quietly let go when
 * quiet (what no rule counts: kept when it can be).
 */
static int keep(struct lg_session *s, const struct lg_event *ev,
		const struct lg_facts *f, bool quiet)
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
		.st = ev->at ? ev->at_st : NULL,
		.dir_dev = ev->at ? ev->at_dir_dev : 0,
		.dir_ino = ev->at ? ev->at_dir_ino : 0,
	};
	int r;

	if (!f->exists || (ev->op != LG_OP_RMDIR) == f->is_dir ||
	    f->nonempty_dir)
		return 0; /* it fails */
	sess_exe_of(s, ev->pid, EXE_CACHED, exe, sizeof(exe));
	who.exe = exe;
	/* put back under the name it had before the session */
	who.origin = f->name_before;
	if (!s->kept_audit_id[0])
		sess_reserve_quarantine_id(s);
	who.audit_id = s->kept_audit_id;
	if (ev->op == LG_OP_RMDIR)
		r = lg_quarantine_dir(s->quarantine, ev->target, &who);
	else if (ev->op == LG_OP_TRUNCATE || ev->op == LG_OP_OPEN_TRUNC ||
		 ev->op == LG_OP_OPEN_WRITE || ev->op == LG_OP_SHRINK)
		r = lg_quarantine_copy(s->quarantine, ev->target, &who,
				       s->cfg->quarantine_max_copy);
	else
		r = lg_quarantine_link(s->quarantine, ev->target, &who);
	if (!r) {
		if (!s->kept_audited && !s->keeping_own) {
			s->kept_audited = true;
			sess_audit_quarantine(s);
		}
		return 0;
	}
	if (quiet) {
		s->not_kept_quiet++;
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
			 "all sessions' copies reach quarantine.max_total" :
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

int sess_keep(struct lg_session *s, const struct lg_event *ev,
	      const struct lg_facts *f)
{
	return keep(s, ev, f, false);
}

void sess_keep_anyway(struct lg_session *s, const struct lg_event *ev,
		      const struct lg_facts *f)
{
	(void)keep(s, ev, f, true);
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
bool sess_kernel_file(const struct lg_event *ev)
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

int sess_on_write_open(struct lg_session *s, struct lg_event *ev,
		       const struct lg_facts *facts)
{
	struct lg_facts f = *facts;
	struct lg_inode_key k;
	char before[PATH_MAX];
	const char *name;
	unsigned fl;
	int err;

	if (!f.exists || !f.is_reg || !f.ino || !s->quarantine ||
	    !s->cfg->quarantine_keep_writes)
		return 0; /* made now (O_CREAT), a device, a fifo */
	/* Forging the quarantine's index or its copies: refused. */
	if (sess_protected_path(s, ev->target) && !sess_our_binary(ev->pid)) {
		char exe[64];

		lg_prov_exe_name(ev->pid, exe, sizeof(exe));
		lg_warn("refused a write to %s by %s[%d]: lgrun's state is protected",
			ev->target, exe, ev->pid);
		s->st.denied++;
		return s->cfg->deny_errno;
	}
	k = sess_inode_key(&f);
	fl = lg_lineage_get(s->content, &k);
	if (fl & (LG_INODE_REWRITTEN | LG_INODE_INHERITED))
		return 0; /* the session's content by now */
	if (fl & LG_INODE_KEPT) {
		/* kept at an earlier open (r+, dd conv=notrunc): emptied now */
		if (ev->op == LG_OP_OPEN_TRUNC && f.size > 0 &&
		    !(fl & LG_INODE_EMPTIED)) {
			lg_lineage_mark(s->content, &k, LG_INODE_EMPTIED, 0);
			sess_emptied_add(s, ev, ev->target, &f, NULL);
		}
		return 0;
	}
	if (!lg_facts_preexisting(&f, s->info.start_real_ns))
		return 0;
	/*
	 * The ignore rules judge the name it had before the session: data
	 * renamed to f.pyc is still data. What they cover is not copied (a
	 * build's outputs rewritten; a removal of them is kept, see fs.c).
	 */
	f.name_before =
		sess_name_before(s, &f, ev->target, before, sizeof(before));
	name = f.name_before ? f.name_before : ev->target;
	if (lg_ignored(s->cfg->ignore, s->cfg->n_ignore, name, NULL))
		return 0;
	if (lg_path_in_git_dir(name)) {
		char exe[64];

		sess_exe_of(s, ev->pid, EXE_RECENT, exe, sizeof(exe));
		if (lg_ignored(s->cfg->ignore, s->cfg->n_ignore, name, exe))
			return 0;
	}
	if (sess_kernel_file(ev))
		return 0;
	{
		unsigned not_kept = s->not_kept;

		err = sess_keep(s, ev, &f);
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
	if (ev->op == LG_OP_OPEN_TRUNC && f.size > 0)
		sess_emptied_add(s, ev, ev->target, &f, NULL);
	lg_dbg("%s %s: its content from before the session is kept",
	       lg_op_name(ev->op), ev->target);
	return 0;
}

/* Its content from before the session is in the quarantine already. */
bool sess_kept_already(const struct lg_session *s, const struct lg_facts *f)
{
	struct lg_inode_key k = sess_inode_key(f);

	return lg_lineage_get(s->content, &k) & LG_INODE_KEPT;
}
