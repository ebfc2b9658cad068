/* SPDX-License-Identifier: MIT */
/*
 * Inside provenance's state (prov.h): struct lg_prov, shared by prov.c
 * (its life), files.c (what the files share), written.c (the files the session
 * wrote, emptied bodies that live on), archives.c (the archives the
 * session wrote), archiver.c (an archiver's own archive), regen.c (build
 * outputs a clean verb removes) and venv.c (a venv's own layout).
 */
#ifndef LG_PROVENANCE_PROV_INT_H
#define LG_PROVENANCE_PROV_INT_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "prov.h"

/* archives the session wrote, remembered (archives.c) */
#define PROV_ARCHIVES 16
/* directories asked "a venv's root?" lately (venv.c) */
#define VENV_DIRS 64
/* processes asked "a build tool's clean verb?" (regen.c) */
#define CLEAN_PIDS 64
/* repositories whose index regen.c read */
#define GIT_REPOS 4
/* directories regenerable or ignored removals emptied (regen.c) */
#define REGEN_DIRS 64

struct lg_archive_index; /* archive.h */
struct prov_git_repo; /* regen.c */

struct lg_prov {
	int64_t start_real_ns; /* the session's start */
	/* files the tree wrote (written.c, lg_prov_wrote): a ring */
	struct prov_wrote {
		char path[PATH_MAX];
		uint64_t hash, at_ms;
	} wrote[LG_PROV_WROTE];
	unsigned wrote_next;
	/*
	 * Files made or renamed to an archive's name (archives.c): their
	 * index (archive.h) read once per version (dev, ino, size, mtime);
	 * read set and ix NULL: that version is no archive lgrun reads.
	 */
	struct prov_archive {
		uint64_t hash; /* of path */
		char path[PATH_MAX]; /* "": a free slot */
		bool read;
		uint64_t dev, ino;
		int64_t size, mtime_ns;
		uint64_t read_ms; /* when it was last read */
		struct lg_archive_index *ix;
	} archives[PROV_ARCHIVES];
	unsigned archives_next, archives_n;
	/* where the last archiver's archive was found (archiver.c) */
	struct {
		pid_t pid;
		bool piped;
		int64_t since_ns;
		char path[PATH_MAX]; /* where: a descriptor, or argv's name */
		char file[PATH_MAX + 32]; /* its name, found at a descriptor */
		/* tar -z's archive in the making: how often it passed (<= max) */
		pid_t pending_for;
		unsigned pending_n;
	} archive;
	/* venv.c: directories asked "a venv's root?" */
	struct prov_venv_dir {
		uint64_t hash; /* of the directory's path */
		uint64_t checked_ms; /* 0: a free slot */
		uint64_t confirmed_ms; /* its pre-existing pyvenv.cfg seen */
		bool venv;
	} venv_dirs[VENV_DIRS];
	unsigned venv_next;
	/* regen.c: the clean verbs' processes, git's indexes, the emptied */
	struct prov_clean_pid {
		pid_t pid;
		unsigned long long start; /* its start (stat's starttime) */
		char comm[16]; /* its name: an exec changes it */
		bool clean;
	} clean_pids[CLEAN_PIDS];
	unsigned clean_pids_next;
	/* the last remover's answer, trusted for CLEAN_FRESH_MS (regen.c) */
	pid_t clean_last_pid;
	uint64_t clean_last_ms;
	bool clean_last;
	struct prov_git_repo *git_repos[GIT_REPOS];
	unsigned git_repos_next;
	uint64_t regen_dirs[REGEN_DIRS]; /* hashes of their paths */
	unsigned regen_dirs_next;
};

/* files.c: what the files share */
uint64_t prov_hash(const char *path);
int64_t prov_ns(struct statx_timestamp t);
/* what archives.c and regen.c hold, freed (prov.c: lg_prov_free) */
void prov_archives_free(struct lg_prov *p);
void prov_regen_free(struct lg_prov *p);

#endif
