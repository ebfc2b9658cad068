// SPDX-License-Identifier: MIT
/*
 * An archiver's removal of what it archived (tar --remove-files, zip -m,
 * 7z -sdel): is the content in an archive the session wrote
 * (lg_prov_archived)? The archive is found through the remover's open files,
 * a compressor child it feeds through a pipe (and that child's open in
 * the making, blocked in lgrun's own notification), or its command line;
 * the pure checks of what is found are guard/classify.c's.
 */
#include <dirent.h>
#include <libgen.h>
#include <linux/audit.h>

#include "lib/cleanup.h"
#include "lib/procmem.h"
#include "prov_int.h"
#include "seccomp/filter.h"

/* The arch of lgrun's own syscalls, which /proc/PID/syscall numbers. */
#if defined(__x86_64__)
#define LG_NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define LG_NATIVE_ARCH AUDIT_ARCH_I386
#else
#define LG_NATIVE_ARCH 0
#endif

/*
 * tar --remove-files, zip -m, 7z a -sdel: a known archiver (by its name)
 * removes a regular file it put in an archive. The archive is looked for
 * where the archiver keeps it while it removes: among the remover's
 * descriptors open for writing (tar cf, bsdtar), among those of a child it
 * feeds through a pipe (tar czf runs gzip, the archive its output), or, for
 * zip and 7z, which close it before they remove, by its name in the command
 * line. The guard decides whether it holds the file (lg_archive_holds).
 * Where it was found is tried first at the remover's next removal.
 */
struct archive_probe {
	struct lg_prov *s;
	const char *exe, *target;
	int64_t size, now_ns;
	struct lg_facts *found; /* the archive's facts, when found */
};
/* A zip found by its name must list the file: its central directory. */
#define ZIP_CD_MAX (8 << 20)
static bool zip_lists(int fd, int64_t size, const char *target)
{
	unsigned char tail[22 + 65535];
	size_t n = size < (int64_t)sizeof(tail) ? (size_t)size : sizeof(tail);
	LG_AUTOFREE unsigned char *cd = NULL;
	uint32_t cd_size, cd_off;
	ssize_t r;

	if (pread(fd, tail, n, size - (int64_t)n) != (ssize_t)n || n < 22)
		return false;
	for (size_t i = n - 22 + 1; i-- > 0;) {
		const unsigned char *e = tail + i;

		if (memcmp(e, "PK\x05\x06", 4) != 0)
			continue;
		cd_size = e[12] | e[13] << 8 | e[14] << 16 |
			  (uint32_t)e[15] << 24;
		cd_off = e[16] | e[17] << 8 | e[18] << 16 |
			 (uint32_t)e[19] << 24;
		if (cd_size > ZIP_CD_MAX || (int64_t)cd_off + cd_size > size ||
		    !(cd = malloc(cd_size ? cd_size : 1)))
			return false;
		r = pread(fd, cd, cd_size, cd_off);
		return r == (ssize_t)cd_size &&
		       lg_zip_lists(cd, cd_size, target);
	}
	return false;
}
static bool archive_at(const struct archive_probe *p, const char *path,
		       bool piped, int64_t since_ns)
{
	const unsigned mask = STATX_TYPE | STATX_SIZE | STATX_NLINK |
			      STATX_INO | STATX_BTIME | STATX_CTIME;
	unsigned char head[LG_ARCHIVE_HEAD];
	struct lg_archive a = { .head = head,
				.piped = piped,
				.since_ns = since_ns };
	struct statx st, again;
	LG_AUTOCLOSE int fd = -1;
	ssize_t r;

	/* never open what is not a regular file (a tape rewinds on close) */
	if (statx(AT_FDCWD, path, 0, mask, &st) != 0 || !S_ISREG(st.stx_mode))
		return false;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, mask, &again) != 0 ||
	    again.stx_ino != st.stx_ino ||
	    again.stx_dev_major != st.stx_dev_major ||
	    again.stx_dev_minor != st.stx_dev_minor)
		return false;
	r = pread(fd, head, sizeof(head), 0);
	if (r < 0)
		return false;
	a.n = (size_t)r;
	a.f.exists = true;
	a.f.is_reg = true;
	a.f.size = (int64_t)again.stx_size;
	a.f.nlink = again.stx_nlink;
	a.f.has_btime = (again.stx_mask & STATX_BTIME) != 0;
	a.f.btime_ns = prov_ns(again.stx_btime);
	a.f.ctime_ns = prov_ns(again.stx_ctime);
	if (!lg_archive_holds(p->exe, &a, p->size, p->s->start_real_ns,
			      p->now_ns))
		return false;
	if (since_ns && a.n >= 4 && memcmp(head, "PK\x03\x04", 4) == 0 &&
	    !zip_lists(fd, a.f.size, p->target))
		return false;
	a.f.dev = makedev(again.stx_dev_major, again.stx_dev_minor);
	a.f.ino = again.stx_ino;
	*p->found = a.f;
	return true;
}
static bool archive_found(const struct archive_probe *p, pid_t pid,
			  const char *path, bool piped, int64_t since_ns)
{
	struct lg_prov *s = p->s;

	if (!archive_at(p, path, piped, since_ns))
		return false;
	char to[PATH_MAX];
	ssize_t n = strncmp(path, "/proc/", 6) == 0 && strstr(path, "/fd/") ?
			    readlink(path, to, sizeof(to) - 1) :
			    -1;

	s->archive.pid = pid;
	s->archive.piped = piped;
	s->archive.since_ns = since_ns;
	snprintf(s->archive.path, sizeof(s->archive.path), "%s", path);
	/*
	 * Its name too: tar -z removes its last files once the compressor
	 * has written the archive whole and is gone.
	 */
	s->archive.file[0] = '\0';
	if (n > 0 && to[0] == '/') {
		to[n] = '\0';
		snprintf(s->archive.file, sizeof(s->archive.file),
			 "/proc/%d/root%s", pid, to);
	}
	return true;
}
#define ARCHIVE_PIPES 4
/*
 * pid's descriptors. With pipes NULL: those open for writing to a file,
 * tried as the archive. Else: the pipes it writes to, into pipes; with
 * feeds set, whether it reads one of them (a child fed by the remover), and
 * then its files open for writing, tried as the archive the pipe fills.
 */
static bool archive_in_fds(const struct archive_probe *p, pid_t remover,
			   pid_t pid, uint64_t *pipes, size_t *npipes,
			   bool child, bool *fed_out)
{
	char dir[64], link[96], to[PATH_MAX];
	LG_AUTOCLOSEDIR DIR *d = NULL;
	struct dirent *e;
	bool fed = false;
	char files[4][24];
	size_t nfiles = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return false;
	while ((e = readdir(d))) {
		unsigned long long ino;
		struct stat ls;
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		/* the link's mode says how it was opened */
		if (lstat(link, &ls) != 0)
			continue;
		n = readlink(link, to, sizeof(to) - 1);
		if (n <= 0)
			continue;
		to[n] = '\0';
		if (sscanf(to, "pipe:[%llu]", &ino) == 1) {
			if (!child && (ls.st_mode & S_IWUSR) &&
			    *npipes < ARCHIVE_PIPES)
				pipes[(*npipes)++] = ino;
			for (size_t i = 0; child && i < *npipes; i++)
				fed |= (ls.st_mode & S_IRUSR) &&
				       pipes[i] == ino;
			continue;
		}
		if (to[0] != '/' || !(ls.st_mode & S_IWUSR))
			continue;
		if (child) {
			if (nfiles < sizeof(files) / sizeof(files[0]))
				snprintf(files[nfiles++], sizeof(files[0]),
					 "%s", e->d_name);
			continue;
		}
		if (archive_found(p, remover, link, false, 0))
			return true;
	}
	if (fed_out)
		*fed_out = fed;
	for (size_t i = 0; fed && i < nfiles; i++) {
		snprintf(link, sizeof(link), "%s/%s", dir, files[i]);
		if (archive_found(p, remover, link, true, 0))
			return true;
	}
	return false;
}
/* A short file of /proc/PID (a line), NUL-terminated; its length or -1. */
static ssize_t proc_read(pid_t pid, const char *what, char *buf, size_t size)
{
	char path[64];
	LG_AUTOCLOSE int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, size - 1)) < 0)
		return -1;
	buf[n] = '\0';
	return n;
}
/* A process's first children (/proc/PID/task/PID/children), into kids. */
#define ARCHIVE_KIDS 8
static size_t children_of(pid_t pid, pid_t *kids)
{
	char what[48], buf[512];
	char *tok, *save = NULL;
	size_t nkids = 0;

	snprintf(what, sizeof(what), "task/%d/children", pid);
	if (proc_read(pid, what, buf, sizeof(buf)) <= 0)
		return 0;
	for (tok = strtok_r(buf, " \n", &save); tok && nkids < ARCHIVE_KIDS;
	     tok = strtok_r(NULL, " \n", &save))
		if (atoi(tok) > 0)
			kids[nkids++] = atoi(tok);
	return nkids;
}
/*
 * tar's child just forked runs (or waits for a CPU) to its open, which
 * needs nothing of lgrun's before it: a short wait until it blocks
 * somewhere (the open; or, its open answered already, the exec that
 * follows). Only for a copy of the remover that runs no other program yet
 * (a compressor at work is not waited for), while the remover may still
 * pass on an archive in the making.
 */
#define ARCHIVE_SETTLE_NS (50 * 1000000ULL)
static void settle(const struct archive_probe *p, pid_t remover, pid_t pid)
{
	char buf[32], exe[64];

	if (p->s->archive.pending_for == remover &&
	    p->s->archive.pending_n >= LG_ARCHIVE_PENDING_MAX)
		return;
	lg_prov_exe_name(pid, exe, sizeof(exe));
	if (strcmp(exe, p->exe) != 0)
		return;
	for (uint64_t t0 = lg_mono_ns();
	     proc_read(pid, "syscall", buf, sizeof(buf)) > 0 &&
	     strncmp(buf, "running", 7) == 0 &&
	     lg_mono_ns() - t0 < ARCHIVE_SETTLE_NS;)
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
}
/*
 * tar -z before its archive exists: GNU tar's child creates the archive,
 * then runs the compressor; that open waits in lgrun's queue behind tar's
 * first removals (one notify thread answers in order: waiting for it here
 * would never end). pid, fed by the remover, is blocked in an open (its
 * /proc/PID/syscall, stable while it waits for lgrun's answer) that creates
 * or truncates for writing a name the compressor it runs writes (.tgz for
 * tar -z): the archive in the making, for at most LG_ARCHIVE_PENDING_MAX
 * removals of the remover. A name of another kind (/dev/null, a fifo), a
 * path that is there and not a regular file, or a task blocked in anything
 * but a seccomp notification is none.
 */
static bool archive_pending(struct lg_prov *s, pid_t remover, pid_t pid)
{
	char buf[256], exe[64], argv[4096], comp[64], name[PATH_MAX];
	char where[96], path[PATH_MAX + 128];
	unsigned long long a[6];
	const struct lg_syscall *sc;
	uint64_t flags;
	struct stat st;
	ssize_t n;
	int nr;

	if (s->archive.pending_for == remover &&
	    s->archive.pending_n >= LG_ARCHIVE_PENDING_MAX)
		return false;
	if (proc_read(pid, "syscall", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%d %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1],
		   &a[2], &a[3], &a[4], &a[5]) != 7)
		return false;
	/* the native arch's numbers: a 32-bit tar's match no open */
	sc = lg_syscall_of(lg_filter_classify(LG_NATIVE_ARCH, nr));
	if (!sc || sc->path < 0)
		return false;
	if (sc->kind == LG_KIND_CREAT)
		flags = O_CREAT | O_WRONLY | O_TRUNC;
	else if (sc->kind == LG_KIND_OPEN)
		flags = a[sc->flags];
	else if (sc->kind == LG_KIND_OPEN_HOW) {
		if (lg_proc_read(pid, a[2], &flags, sizeof(flags)) < 0)
			return false;
	} else
		return false;
	if ((flags & O_ACCMODE) == O_RDONLY || !(flags & (O_CREAT | O_TRUNC)))
		return false;
	/* blocked in lgrun's answer, not in a fifo's or a lease's wait */
	if (proc_read(pid, "wchan", buf, sizeof(buf)) > 0 &&
	    strcmp(buf, "0") != 0 && !strstr(buf, "seccomp"))
		return false;
	if (lg_proc_string(pid, a[sc->path], name, sizeof(name)) < 0 ||
	    !name[0])
		return false;
	lg_prov_exe_name(pid, exe, sizeof(exe));
	n = proc_read(pid, "cmdline", argv, sizeof(argv));
	if (n <= 0 ||
	    !lg_archive_compressor(exe, argv, (size_t)n + 1, comp,
				   sizeof(comp)) ||
	    !lg_archive_named_for(comp, name))
		return false;
	if (name[0] == '/')
		snprintf(where, sizeof(where), "/proc/%d/root", pid);
	else if (sc->dirfd < 0 || (int)a[sc->dirfd] == AT_FDCWD)
		snprintf(where, sizeof(where), "/proc/%d/cwd", pid);
	else
		snprintf(where, sizeof(where), "/proc/%d/fd/%d", pid,
			 (int)a[sc->dirfd]);
	if (snprintf(path, sizeof(path), "%s/%s", where, name) >=
	    (int)sizeof(path))
		return false;
	if (stat(path, &st) == 0 ?
		    !S_ISREG(st.st_mode) :
		    errno != ENOENT || stat(dirname(path), &st) != 0 ||
			    !S_ISDIR(st.st_mode))
		return false;
	if (s->archive.pending_for != remover) {
		s->archive.pending_for = remover;
		s->archive.pending_n = 0;
	}
	s->archive.pending_n++;
	lg_dbg("archive in the making: %s opens %s for %s (%s), removal %u",
	       exe, name, comp, where, s->archive.pending_n);
	return true;
}
/*
 * A child the remover feeds through a pipe, writing the archive; or its
 * child (sh -c gzip forks gzip); or either about to create it.
 */
static bool archive_in_children(const struct archive_probe *p, pid_t pid,
				uint64_t *pipes, size_t *npipes)
{
	pid_t kids[ARCHIVE_KIDS], fed_kids[ARCHIVE_KIDS], grand[ARCHIVE_KIDS];
	size_t nkids = children_of(pid, kids), nfed = 0, ngrand;
	bool fed;

	for (size_t i = 0; i < nkids; i++) {
		fed = false;
		if (archive_in_fds(p, pid, kids[i], pipes, npipes, true, &fed))
			return true;
		if (fed)
			fed_kids[nfed++] = kids[i];
	}
	/* none has its output open yet: tar -z's child, about to */
	for (size_t i = 0; i < nfed; i++) {
		settle(p, pid, fed_kids[i]);
		if (archive_in_fds(p, pid, fed_kids[i], pipes, npipes, true,
				   NULL) ||
		    archive_pending(p->s, pid, fed_kids[i]))
			return true;
		ngrand = children_of(fed_kids[i], grand);
		for (size_t j = 0; j < ngrand; j++) {
			fed = false;
			if (archive_in_fds(p, pid, grand[j], pipes, npipes,
					   true, &fed))
				return true;
			if (fed && archive_pending(p->s, pid, grand[j]))
				return true;
		}
	}
	return false;
}
/* When pid started, on the realtime clock (0: unknown). */
static int64_t started_ns(pid_t pid)
{
	char buf[1024], *end;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	int64_t boot;

	if (hz <= 0 || proc_read(pid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	/* after the name in parentheses: state is field 3, starttime 22 */
	end = strrchr(buf, ')');
	if (!end || sscanf(end + 1,
			   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u"
			   " %*u %*d %*d %*d %*d %*d %*d %llu",
			   &ticks) != 1)
		return 0;
	boot = (int64_t)(ticks * (1000000000ULL / (unsigned long long)hz));
	/* a tick early: the start time is counted in ticks */
	return lg_real_ns() - ((int64_t)lg_boot_ns() - boot) -
	       1000000000LL / hz;
}
/*
 * pid read at least size bytes, and a tar wrote as many (/proc/PID/io:
 * its stream of the file, to its archive or its compressor): a program
 * named after an archiver that removes files it never read, naming an
 * archive it did not write, is no archiver (the start time it is checked
 * against is a tick coarse).
 */
static bool moved_bytes(pid_t pid, const char *exe, int64_t size)
{
	char buf[512];
	unsigned long long rchar = 0, wchar = 0;
	const char *r, *w;

	if (proc_read(pid, "io", buf, sizeof(buf)) <= 0)
		return false;
	r = strstr(buf, "rchar: ");
	w = strstr(buf, "wchar: ");
	if (!r || !w || sscanf(r + 7, "%llu", &rchar) != 1 ||
	    sscanf(w + 7, "%llu", &wchar) != 1)
		return false;
	if (size < 0)
		size = 0;
	return rchar >= (unsigned long long)size &&
	       (lg_archiver_by_name(exe) || wchar >= (unsigned long long)size);
}

/* The archive named in argv: zip out.zip, 7z a out.7z, tar czf out.tgz. */
static bool archive_in_argv(const struct archive_probe *p, pid_t pid)
{
	char buf[16384], cand[PATH_MAX];
	const char *dflt = p->exe[0] == 'z' ? ".zip" : ".7z";
	int64_t since = started_ns(pid);
	ssize_t n;
	size_t off;
	int args = 0;

	if (!since || !moved_bytes(pid, p->exe, p->size) ||
	    (n = proc_read(pid, "cmdline", buf, sizeof(buf))) <= 0)
		return false;
	off = strlen(buf) + 1; /* past argv[0] */
	for (; off < (size_t)n && args < 64; off += strlen(buf + off) + 1) {
		const char *arg = buf + off, *base;

		if (!arg[0] || arg[0] == '-')
			continue;
		args++;
		if (snprintf(cand, sizeof(cand), "/proc/%d/%s/%s", pid,
			     arg[0] == '/' ? "root" : "cwd",
			     arg) >= (int)sizeof(cand))
			continue;
		if (archive_found(p, pid, cand, false, since))
			return true;
		base = strrchr(arg, '/');
		if (strchr(base ? base + 1 : arg, '.') ||
		    strlen(cand) + strlen(dflt) >= sizeof(cand))
			continue;
		strcat(cand, dflt);
		if (archive_found(p, pid, cand, false, since))
			return true;
	}
	return false;
}
bool lg_prov_archived(struct lg_prov *s, const struct lg_event *ev,
		      const char *exe, int64_t size, struct lg_facts *archive)
{
	struct archive_probe p = { .s = s,
				   .exe = exe,
				   .target = ev->target,
				   .size = size,
				   .now_ns = lg_real_ns(),
				   .found = archive };
	uint64_t pipes[ARCHIVE_PIPES];
	size_t npipes = 0;
	unsigned pending = s->archive.pending_n;
	bool found;

	if (!lg_archiver(exe))
		return false;
	found = s->archive.pid == ev->pid &&
		(archive_at(&p, s->archive.path, s->archive.piped,
			    s->archive.since_ns) ||
		 (s->archive.file[0] &&
		  archive_at(&p, s->archive.file, false, 0)));
	if (!found && !lg_archiver_by_name(exe))
		found = archive_in_fds(&p, ev->pid, ev->pid, pipes, &npipes,
				       false, NULL) ||
			(npipes &&
			 archive_in_children(&p, ev->pid, pipes, &npipes));
	/*
	 * zip and 7z close the archive before they remove; so does tar -z of
	 * a small tree (it waits for its compressor before its removals):
	 * the archive named on the command line, written since it started.
	 */
	if (!found)
		found = archive_in_argv(&p, ev->pid);
	if (found && (s->archive.pending_n == pending ||
		      s->archive.pending_for != ev->pid))
		lg_dbg("%s: its content lives on in the archive %s (%s)",
		       ev->target, s->archive.path, exe);
	return found;
}
