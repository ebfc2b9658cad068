// SPDX-License-Identifier: MIT
/*
 * Unit tests for gitodb.c against real repositories, made with the git
 * command in a temporary directory: loose objects, packs (git gc), a linked
 * worktree, a submodule, alternates (absolute, relative, chained), a
 * symlink, SHA-256. Skipped when git is not installed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "seccomp/gitodb.h"

static char T[64];
static bool have_git, have_sha256;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs a shell command in T; 0 when it succeeded. */
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int n;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && { ", T);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	strncat(cmd, "; } >/dev/null 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return system(cmd);
}

/* The first line a shell command prints, run in T. */
static void sh_out(char *out, size_t size, const char *cmd)
{
	char full[4096];
	FILE *p;

	snprintf(full, sizeof(full), "cd '%s' && %s", T, cmd);
	p = popen(full, "r");
	assert_non_null(p);
	if (!fgets(out, (int)size, p))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	pclose(p);
}

static const char *at(const char *rel)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", T, rel);
	return buf[i];
}

/* Every repository the tests read, made once. */
static const char fixture[] =
	"set -e\n"
	"G() { git -c init.defaultBranch=main -c protocol.file.allow=always "
	"\"$@\"; }\n"
	/* loose objects only */
	"G init -q loose; cd loose\n"
	"mkdir sub; printf 'alpha\\n' >a.txt; printf 'beta\\n' >sub/b.txt\n"
	": >empty; ln -s a.txt link; ln -s nowhere/else dangling\n"
	"head -c 4096 /dev/zero | tr '\\0' x >big.bin\n"
	"head -c 1000003 /dev/urandom >rand.bin\n" /* many blocks, odd size */
	"printf 'v1\\n' >old.txt; printf 'm1\\n' >m.txt\n"
	"G add -A; G commit -qm one\n"
	"printf 'v2\\n' >old.txt; G commit -qam two\n"
	"printf 'v1\\n' >old.txt\n" /* content from history: stored */
	"printf 'm2 local\\n' >m.txt\n" /* changed, not committed */
	"printf 'untracked 7f3a\\n' >u.txt\n"
	"printf 'staged only\\n' >staged.txt; G add staged.txt\n"
	"printf 'written\\n' >w.txt; G hash-object -w w.txt\n"
	"ln -s u.txt ulink\n" /* a symlink git does not hold */
	/* Git LFS's store, as git-lfs fills it: by SHA-256 of the content */
	"printf 'large file content\\n' >lfs.bin; printf 'not in lfs\\n' >nolfs.bin\n"
	"o=$(sha256sum lfs.bin | cut -c1-64); d=.git/lfs/objects/$(echo $o | "
	"cut -c1-2)/$(echo $o | cut -c3-4); mkdir -p $d; cp lfs.bin $d/$o\n"
	"cd ..\n"
	/* everything packed, no loose object left */
	"G init -q packed; cd packed\n"
	"for i in $(seq 1 300); do printf 'packed %s\\n' $i >p$i.txt; done\n"
	"G add -A; G commit -qm packed; G gc -q --prune=now\n"
	"test \"$(G count-objects | cut -d' ' -f1)\" = 0\n"
	"printf 'packed 301\\n' >p301.txt\n"
	"cd ..\n"
	/* a linked worktree: objects in the common directory */
	"G -C loose worktree add -q ../wt -b wtb\n"
	"printf 'only in wt\\n' >wt/local.txt; cp loose/lfs.bin wt/\n"
	/* alternates: absolute (clone --shared), chained, relative */
	"G clone -q --shared loose alt\n"
	"G clone -q --shared alt alt2\n"
	"G clone -q --shared loose alt3\n"
	"echo ../../../loose/.git/objects >alt3/.git/objects/info/alternates\n"
	"test ! -e alt2/.git/objects/$(G -C loose rev-parse HEAD:a.txt | "
	"cut -c1-2)\n"
	/* a submodule: .git is a file, gitdir in the superproject's .git */
	"G init -q super; cd super; echo top >top.txt; G add top.txt\n"
	"G submodule add -q \"$PWD/../loose\" sub; G commit -qm sub; cd ..\n"
	"test -f super/sub/.git\n"
	/* not a repository at all */
	"mkdir norepo; printf 'alpha\\n' >norepo/a.txt\n";

static int setup(void **state)
{
	(void)state;
	snprintf(T, sizeof(T), "/tmp/lgrun-test-gitodb.XXXXXX");
	if (!mkdtemp(T))
		return -1;
	/* Keep the developer's git config out of it. */
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	setenv("HOME", T, 1);
	setenv("GIT_AUTHOR_NAME", "lgrun test", 1);
	setenv("GIT_AUTHOR_EMAIL", "lgrun-test@example.invalid", 1);
	setenv("GIT_COMMITTER_NAME", "lgrun test", 1);
	setenv("GIT_COMMITTER_EMAIL", "lgrun-test@example.invalid", 1);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_OBJECT_DIRECTORY");
	unsetenv("GIT_ALTERNATE_OBJECT_DIRECTORIES");
	have_git = system("git --version >/dev/null 2>&1") == 0;
	if (!have_git)
		return 0;
	{
		char *script;
		FILE *f;

		if (asprintf(&script, "%s/fixture.sh", T) < 0)
			return -1;
		f = fopen(script, "w");
		if (!f)
			return -1;
		fputs(fixture, f);
		fclose(f);
		if (sh("sh -x fixture.sh >fixture.log 2>&1") != 0) {
			char log[8192];
			FILE *l;
			size_t n;

			snprintf(log, sizeof(log), "%s/fixture.log", T);
			l = fopen(log, "r");
			if (l) {
				n = fread(log, 1, sizeof(log) - 1, l);
				log[n] = '\0';
				fclose(l);
				fprintf(stderr, "%s", log);
			}
			free(script);
			return -1;
		}
		free(script);
	}
	/* SHA-256 repositories are experimental in git; older ones lack them */
	have_sha256 =
		sh("git -c init.defaultBranch=main init -q "
		   "--object-format=sha256 s256 && cd s256 && "
		   "printf 'sha256 alpha\\n' >a.txt && ln -s a.txt link && "
		   "git add -A && git commit -qm one && "
		   "printf 'changed\\n' >m.txt") == 0;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	return system(cmd) == 0 ? 0 : -1;
}

static void need_git(void)
{
	if (!have_git) {
		printf("SKIP: needs the git command (make deps installs it)\n");
		skip();
	}
}

/* Stored or not: the content decides, wherever the object lives. */
static void test_stored(void **state)
{
	static const struct {
		const char *path;
		int want;
	} cases[] = {
		/* loose objects */
		{ "loose/a.txt", 1 },
		{ "loose/sub/b.txt", 1 },
		{ "loose/empty", 1 },
		{ "loose/link", 1 }, /* a symlink's blob is its target */
		{ "loose/dangling", 1 },
		{ "loose/big.bin", 1 },
		{ "loose/rand.bin", 1 },
		{ "loose/old.txt", 1 }, /* in history, not at HEAD */
		{ "loose/staged.txt", 1 }, /* in the index only */
		{ "loose/w.txt", 1 }, /* hash-object -w */
		{ "loose/m.txt", 0 }, /* changed since the commit */
		{ "loose/u.txt", 0 }, /* untracked */
		{ "loose/ulink", 0 },
		{ "loose/nothere", -ENOENT },
		{ "loose/sub", -EINVAL }, /* a directory */
		{ "loose/lfs.bin", 1 }, /* in Git LFS's store */
		{ "loose/nolfs.bin", 0 },
		/* packs: 300 ids in one index, the binary search's work */
		{ "packed/p1.txt", 1 },
		{ "packed/p150.txt", 1 },
		{ "packed/p300.txt", 1 },
		{ "packed/p301.txt", 0 },
		/* a linked worktree reads the common directory's objects */
		{ "wt/a.txt", 1 },
		{ "wt/sub/b.txt", 1 },
		{ "wt/m.txt", 1 }, /* the committed m1, checked out there */
		{ "wt/local.txt", 0 },
		{ "wt/lfs.bin", 1 },
		/* alternates */
		{ "alt/a.txt", 1 },
		{ "alt2/a.txt", 1 }, /* alternates of alternates */
		{ "alt3/sub/b.txt", 1 }, /* a relative alternate */
		{ "alt/m.txt", 1 },
		/* a submodule's work tree */
		{ "super/sub/a.txt", 1 },
		{ "super/top.txt", 1 },
		/* no repository: never recoverable */
		{ "norepo/a.txt", -ENOENT },
	};
	struct lg_gitodb *db;

	(void)state;
	need_git();
	db = lg_gitodb_new(0);
	assert_non_null(db);
	/* twice: the second round is answered through the caches */
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			int got = lg_gitodb_stored(db, at(cases[i].path));

			if (got != cases[i].want)
				fail_msg("round %d, %s: got %d, expected %d",
					 round, cases[i].path, got,
					 cases[i].want);
		}
	lg_gitodb_free(db);
}

static void test_sha256(void **state)
{
	struct lg_gitodb *db;
	char want[80], hex[80];

	(void)state;
	need_git();
	if (!have_sha256) {
		printf("SKIP: this git has no SHA-256 repositories\n");
		skip();
	}
	db = lg_gitodb_new(0);
	assert_non_null(db);
	assert_int_equal(lg_gitodb_stored(db, at("s256/a.txt")), 1);
	assert_int_equal(lg_gitodb_stored(db, at("s256/link")), 1);
	assert_int_equal(lg_gitodb_stored(db, at("s256/m.txt")), 0);
	lg_gitodb_free(db);
	for (int accel = 0; accel < 2; accel++) {
		lg_gitodb_hash_accel(accel);
		sh_out(want, sizeof(want), "git -C s256 hash-object a.txt");
		assert_int_equal(lg_gitodb_blob_id(at("s256/a.txt"), 1, 0, hex,
						   sizeof(hex)),
				 64);
		assert_string_equal(hex, want);
		/* many blocks: the id git gives it in a SHA-256 repository */
		sh_out(want, sizeof(want),
		       "cp loose/rand.bin s256/ && "
		       "git -C s256 hash-object rand.bin");
		assert_int_equal(lg_gitodb_blob_id(at("s256/rand.bin"), 1, 0,
						   hex, sizeof(hex)),
				 64);
		assert_string_equal(hex, want);
	}
}

/*
 * The ids are git's own, for files, empty files and symlinks, with the
 * CPU's SHA instructions and without.
 */
static void test_blob_ids(void **state)
{
	static const struct {
		const char *path, *cmd;
	} cases[] = {
		{ "loose/a.txt", "git hash-object loose/a.txt" },
		{ "loose/empty", "git hash-object loose/empty" },
		{ "loose/big.bin", "git hash-object loose/big.bin" },
		{ "loose/rand.bin", "git hash-object loose/rand.bin" },
		{ "loose/m.txt", "git hash-object loose/m.txt" },
		{ "loose/link", "printf a.txt | git hash-object --stdin" },
		{ "loose/dangling",
		  "printf nowhere/else | git hash-object --stdin" },
	};
	char want[80], hex[80];

	(void)state;
	need_git();
	for (int accel = 0; accel < 2; accel++) {
		lg_gitodb_hash_accel(accel);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			sh_out(want, sizeof(want), cases[i].cmd);
			assert_int_equal(lg_gitodb_blob_id(at(cases[i].path), 0,
							   0, hex, sizeof(hex)),
					 40);
			assert_string_equal(hex, want);
		}
	}
	/* a known id: git's empty blob */
	assert_int_equal(lg_gitodb_blob_id(at("loose/empty"), 0, 0, hex,
					   sizeof(hex)),
			 40);
	assert_string_equal(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
	assert_int_equal(lg_gitodb_blob_id(at("loose/sub"), 0, 0, hex,
					   sizeof(hex)),
			 -EINVAL);
	assert_int_equal(lg_gitodb_blob_id(at("loose/a.txt"), 0, 0, hex, 40),
			 -ENOSPC);
}

/* Files above the limit are not read: not known to be stored. */
static void test_size_limit(void **state)
{
	struct lg_gitodb *db;

	(void)state;
	need_git();
	db = lg_gitodb_new(1000);
	assert_non_null(db);
	assert_int_equal(lg_gitodb_stored(db, at("loose/big.bin")), -EFBIG);
	assert_int_equal(lg_gitodb_stored(db, at("loose/a.txt")), 1);
	lg_gitodb_free(db);
}

static void test_in_worktree(void **state)
{
	struct lg_gitodb *db;

	(void)state;
	need_git();
	db = lg_gitodb_new(0);
	assert_non_null(db);
	assert_int_equal(lg_gitodb_in_worktree(db, at("loose/sub")), 1);
	assert_int_equal(lg_gitodb_in_worktree(db, at("wt/sub")), 1);
	assert_int_equal(lg_gitodb_in_worktree(db, at("super/sub")), 1);
	assert_int_equal(lg_gitodb_in_worktree(db, at("norepo")), 0);
	assert_int_equal(lg_gitodb_in_worktree(db, at("norepo/x")), 0);
	lg_gitodb_free(db);
}

/*
 * The pack list is cached and read again when objects/pack changes: what
 * git gc packs (and prunes from the loose objects) is still found.
 */
static void test_pack_rescan(void **state)
{
	struct lg_gitodb *db;
	unsigned long scans;

	(void)state;
	need_git();
	assert_int_equal(sh("git -c init.defaultBranch=main init -q rescan && "
			    "cd rescan && printf 'first\\n' >r1.txt && "
			    "git add r1.txt && git commit -qm one"),
			 0);
	db = lg_gitodb_new(0);
	assert_non_null(db);
	assert_int_equal(lg_gitodb_stored(db, at("rescan/r1.txt")), 1);
	scans = lg_gitodb_pack_scans(db);
	assert_int_equal(scans, 1);
	assert_int_equal(sh("printf 'second 51c2\\n' >rescan/r2.txt"), 0);
	assert_int_equal(lg_gitodb_stored(db, at("rescan/r2.txt")), 0);
	assert_int_equal(lg_gitodb_pack_scans(db), scans); /* unchanged */
	assert_int_equal(
		sh("cd rescan && git add r2.txt && "
		   "git commit -qm two && git gc -q --prune=now && "
		   "test \"$(git count-objects | cut -d' ' -f1)\" = 0"),
		0);
	assert_int_equal(lg_gitodb_stored(db, at("rescan/r2.txt")), 1);
	assert_int_equal(lg_gitodb_stored(db, at("rescan/r1.txt")), 1);
	assert_true(lg_gitodb_pack_scans(db) > scans);
	scans = lg_gitodb_pack_scans(db);
	assert_int_equal(lg_gitodb_stored(db, at("rescan/r1.txt")), 1);
	assert_int_equal(lg_gitodb_pack_scans(db), scans);
	lg_gitodb_free(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stored),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_blob_ids),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_in_worktree),
		cmocka_unit_test(test_pack_rescan),
	};

	return cmocka_run_group_tests_name("gitodb", tests, setup, teardown);
}
