// SPDX-License-Identifier: MIT
/*
 * A virtual environment (a directory with a pyvenv.cfg from before the
 * session at its top) is regenerable: removals in its own layout
 * (lg_venv_root) do not count. venv --clear and rm -rf remove pyvenv.cfg
 * too, in any order: a root seen is taken as one for VENV_GONE_MS after
 * its pyvenv.cfg was last seen. Answers are cached per directory
 * (VENV_DIRS, a ring), a "no" for VENV_ASK_MS: a venv's rm -rf of
 * thousands of files costs a stat per directory, not per file.
 */
#include "prov_int.h"

#define VENV_ASK_MS 1000
#define VENV_GONE_MS 60000
static bool venv_dir(struct lg_prov *s, const char *root, uint64_t now)
{
	uint64_t h = prov_hash(root);
	struct prov_venv_dir *d = NULL;
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
			.btime_ns = prov_ns(st.stx_btime),
			.ctime_ns = prov_ns(st.stx_ctime),
		};

		if (lg_facts_preexisting(&c, s->start_real_ns)) {
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

bool lg_prov_in_venv(struct lg_prov *s, enum lg_op op, const char *path,
		     uint64_t now)
{
	char root[PATH_MAX];

	for (size_t i = 0; lg_venv_root(op, path, i, root, sizeof(root)); i++)
		if (venv_dir(s, root, now))
			return true;
	return false;
}
