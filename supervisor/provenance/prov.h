/* SPDX-License-Identifier: MIT */
/*
 * Is this loss? What the session asks of a removal or an emptied file
 * before it counts it (issue 41): whether the content lives on, read from
 * the world (/proc, the files' bytes) and from what the session wrote.
 * struct lg_prov remembers what the answers need across operations: the
 * files the session wrote (a ring: where an emptied body may live on), the
 * archives it wrote and their indexes (archives.c), where the last
 * archiver's archive was found (archiver.c), the clean verbs' processes
 * and git's indexes (regen.c), the venvs' roots (venv.c). It knows no
 * session: the session holds its lock around every call, and does what
 * an answer implies (an archive that inherits the pre-existing status).
 */
#ifndef LG_PROVENANCE_PROV_H
#define LG_PROVENANCE_PROV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "guard/classify.h"
#include "guard/event.h"
#include "lib/text.h"

struct lg_prov;
struct lg_programs;

/* start_real_ns: the session's start; what is older is pre-existing. */
struct lg_prov *lg_prov_new(int64_t start_real_ns);
void lg_prov_free(struct lg_prov *p);

/*
 * written.c: a file the tree wrote (made, opened for writing, renamed
 * to), remembered (a ring of LG_PROV_WROTE), and what an emptied file
 * left behind: its body's lines (sampled before), what its path holds
 * now, who holds it open for writing, whether the body lives on in a file
 * the session wrote.
 */
#define LG_PROV_WROTE 32
void lg_prov_wrote(struct lg_prov *p, const char *path);
/* Up to SAMPLE_READ of ev's target (or path, ev NULL), its lines. */
void lg_prov_sample(const struct lg_event *ev, const char *path,
		    struct lg_lines_sample *out);
enum lg_prov_left {
	LG_LEFT_GONE, /* not the same inode there */
	LG_LEFT_CONTENT, /* written again */
	LG_LEFT_EMPTY,
	LG_LEFT_STUB, /* lg_stub_of the size it had */
};
/* What path holds now of id (the file emptied), which had size before. */
enum lg_prov_left lg_prov_left_at(const char *path, const struct lg_facts *id,
				  int64_t before);
/* Which of the files (dev, ino) some process holds open for writing. */
void lg_prov_writers(const uint64_t *dev, const uint64_t *ino, size_t n,
		     bool *held);
/*
 * The body sampled lives on in a file the session wrote lately (not path,
 * nor before, its name before the session, nor the inode dev/ino itself).
 */
bool lg_prov_lives_on(const struct lg_prov *p,
		      const struct lg_lines_sample *sample, const char *path,
		      const char *before, uint64_t dev, uint64_t ino,
		      uint64_t now_ms);

/*
 * archives.c: the archives the session wrote (a file made or renamed to
 * an archive's name), and whether one of them, born in the session, holds
 * a removed file (its base name, size and CRC-32) or folder (its name);
 * the archive's facts into *archive.
 */
void lg_prov_archive_written(struct lg_prov *p, const char *path);
bool lg_prov_archive_holds(struct lg_prov *p, const struct lg_event *ev,
			   const struct lg_facts *f, struct lg_facts *archive);

/*
 * archiver.c: is what an archiver (exe) removes in an archive it wrote in
 * the session? The archive's facts into *archive.
 */
bool lg_prov_archived(struct lg_prov *p, const struct lg_event *ev,
		      const char *exe, int64_t size, struct lg_facts *archive);

/*
 * regen.c: a build output its tool's clean verb removes (programs: what
 * the tools' names mean); a directory a regenerable or ignored removal is
 * emptying.
 */
bool lg_prov_clean_output(struct lg_prov *p, const struct lg_programs *programs,
			  const struct lg_event *ev, const struct lg_facts *f);
void lg_prov_regen_emptied(struct lg_prov *p, const char *path);

/* venv.c: a removal in a venv's own layout, of one from before it. */
bool lg_prov_in_venv(struct lg_prov *p, enum lg_op op, const char *path,
		     uint64_t now_ms);

/*
 * files.c: the directory a file op's target is in, and its name there: the
 * one the notify step opened in the tree's view (ev->at_dirfd), or opened
 * now from the target's path into *own (the caller closes it). -1: none.
 */
int lg_prov_target_dir(const struct lg_event *ev, int *own, const char **name);
/* pid's program, its base name ("?" when unknown). */
void lg_prov_exe_name(pid_t pid, char *out, size_t size);

#endif
