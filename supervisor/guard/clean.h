/* SPDX-License-Identifier: MIT */
/*
 * Regenerable outputs (issue 41): what a build tool's clean verb removes
 * of its own outputs. Pure: the clean verbs of guard/clean.def matched
 * against a command line, what a file's head or its name beside its
 * source says of it, a tool's output directories, and git's index read
 * from its bytes. The session (provenance/regen.c) reads the processes and
 * the files.
 */
#ifndef LG_CLEAN_H
#define LG_CLEAN_H

#include <stdbool.h>
#include <stddef.h>

enum lg_runs { LG_RUNS_BIN, LG_RUNS_SCRIPT, LG_RUNS_JAVA };

/*
 * The clean verb a process runs, from its executable's basename exe and
 * its command line argv (n bytes, NUL-separated, as /proc/PID/cmdline):
 * the name of its line in guard/clean.def ("make", "cargo", "git"...), or
 * NULL. *bin is set when the name is the executable's own (LG_RUNS_BIN):
 * the caller checks it is the program installed under that name.
 */
const char *lg_clean_verb(const char *exe, const char *argv, size_t n,
			  bool *bin);
/* The i-th program name of guard/clean.def run as itself, NULL past the last. */
const char *lg_clean_program(size_t i);

/* How much of a file's head lg_build_output_head() reads. */
#define LG_BUILD_HEAD 4096
/*
 * Does the head of the file name (its basename) say it is a build's
 * output? An object, executable, library or archive of objects (ELF, ar,
 * PE, Mach-O, wasm, LLVM bitcode, a Java class, Python bytecode named
 * .pyc/.pyo), or text that says what generated it (configure,
 * config.status, automake, libtool, CMake, Bison, flex) in its first
 * LG_BUILD_HEAD bytes. What it is ("an ELF file"), or NULL.
 */
const char *lg_build_output_head(const char *name, const unsigned char *head,
				 size_t n);

/*
 * A LaTeX auxiliary (.aux .log .toc .lof .lot .out .fls .fdb_latexmk .bbl
 * .blg .synctex.gz .nav .snm .bcf .run.xml .xdv .dvi, and the .pdf and .ps
 * latexmk -C removes): the source it comes from, its stem + ".tex", into
 * tex. false when name is none.
 */
bool lg_latex_aux(const char *name, char *tex, size_t size);

/*
 * Tools' output directories: the i-th directory (from the nearest) that
 * would make path (absolute; a directory's own path counts when is_dir)
 * part of a tool's output, if one of the files *markers names
 * ('|'-separated, in the directory's parent; a glob: "*.csproj") is there:
 * target/ beside Cargo.toml or pom.xml, build/ beside a Gradle build or a
 * Python project, dist/ and *.egg-info/ beside a Python project, bin/ and
 * obj/ beside a .NET project, CMakeFiles/ beside CMakeCache.txt,
 * autom4te.cache/ beside configure.ac, .deps/ beside Makefile.in. Its
 * parent's path into parent; 1, or 0 past the last.
 */
int lg_output_dir(const char *path, bool is_dir, size_t i, char *parent,
		  size_t size, const char **markers);

/*
 * git's index (.git/index, versions 2 to 4), read from its bytes: the
 * paths it tracks. NULL when it is not one lgrun reads (a split index, a
 * sparse one, damaged): the caller takes everything as tracked.
 */
struct lg_git_index;
struct lg_git_index *lg_git_index_parse(const unsigned char *buf, size_t n);
void lg_git_index_free(struct lg_git_index *x);
size_t lg_git_index_count(const struct lg_git_index *x);
/*
 * Does the index track rel (relative to the work tree's top): a file of
 * it, or, dir, a directory holding one?
 */
bool lg_git_index_tracks(const struct lg_git_index *x, const char *rel,
			 bool dir);

#endif
