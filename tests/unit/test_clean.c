// SPDX-License-Identifier: MIT
/*
 * Unit tests for guard/clean.c (issue 41): the clean verbs of
 * guard/clean.def matched against command lines, a build output's
 * evidence, tools' output directories, git's index read from its bytes.
 * latexmk, go, gradle and dotnet are not installed where the corpus runs:
 * their lines are checked here only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guard/clean.h"

/*
 * The verb of a command line (words split at spaces; exe: the
 * executable's basename), "-" for none, "name*" when the name is not the
 * executable's own (a script or a java main class).
 */
static const char *verb(const char *exe, const char *line)
{
	static char out[64];
	char buf[1024];
	const char *v;
	size_t n = strlen(line);
	bool bin;

	memcpy(buf, line, n + 1);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == ' ')
			buf[i] = '\0';
	v = lg_clean_verb(exe, buf, n + 1, &bin);
	if (!v)
		return "-";
	snprintf(out, sizeof(out), "%s%s", v, bin ? "" : "*");
	return out;
}

static void test_make(void **state)
{
	(void)state;
	assert_string_equal(verb("make", "make clean"), "make");
	assert_string_equal(verb("make", "make -s distclean"), "make");
	assert_string_equal(verb("make", "make -C proj clean"), "make");
	assert_string_equal(verb("make", "make -f build.mk mostlyclean"),
			    "make");
	assert_string_equal(verb("make", "make -j2 V=1 maintainer-clean"),
			    "make");
	assert_string_equal(verb("make", "/usr/bin/make realclean"), "make");
	assert_string_equal(verb("make", "make clobber all"), "make");
	assert_string_equal(verb("gmake", "gmake clean"), "gmake");
	/* no clean target: -C's value, -f's value, a build */
	assert_string_equal(verb("make", "make -C clean"), "-");
	assert_string_equal(verb("make", "make -f clean all"), "-");
	assert_string_equal(verb("make", "make"), "-");
	assert_string_equal(verb("make", "make install"), "-");
	assert_string_equal(verb("make", "make cleanup"), "-");
	/* a script named make, run by a shell: not make */
	assert_string_equal(verb("dash", "/bin/sh ./make clean"), "-");
	assert_string_equal(verb("bash", "bash -c make clean"), "-");
}

static void test_tools(void **state)
{
	(void)state;
	assert_string_equal(verb("cargo", "cargo clean"), "cargo");
	assert_string_equal(verb("cargo", "cargo +nightly clean -p foo"),
			    "cargo");
	assert_string_equal(verb("cargo", "cargo -q clean --release"), "cargo");
	assert_string_equal(verb("cargo", "cargo build"), "-");
	assert_string_equal(verb("cargo", "cargo run clean"), "-");
	assert_string_equal(verb("go", "go clean -cache"), "go");
	assert_string_equal(verb("go", "go clean -testcache -modcache"), "go");
	assert_string_equal(verb("go", "go build ./..."), "-");
	assert_string_equal(verb("dotnet", "dotnet clean -c Release"),
			    "dotnet");
	assert_string_equal(verb("dotnet", "dotnet build"), "-");
	assert_string_equal(verb("ninja", "ninja -t clean"), "ninja");
	assert_string_equal(verb("ninja", "ninja -C build -tclean"), "ninja");
	assert_string_equal(verb("ninja", "ninja clean"), "ninja");
	assert_string_equal(verb("ninja", "ninja -t targets"), "-");
	assert_string_equal(verb("ninja", "ninja -C clean"), "-");
	assert_string_equal(verb("cmake", "cmake --build build --target clean"),
			    "cmake");
	assert_string_equal(verb("cmake", "cmake --build . --target=clean"),
			    "cmake");
	assert_string_equal(verb("cmake", "cmake --build . -t clean"), "cmake");
	assert_string_equal(verb("cmake", "cmake --build . --clean-first"),
			    "cmake");
	assert_string_equal(verb("cmake", "cmake --build build"), "-");
	assert_string_equal(verb("cmake", "cmake -S . -B build --target clean"),
			    "-");
}

static void test_git(void **state)
{
	(void)state;
	assert_string_equal(verb("git", "git clean -fdX"), "git");
	assert_string_equal(verb("git", "git clean -X -f -d"), "git");
	assert_string_equal(verb("git", "git -C repo clean -fX"), "git");
	assert_string_equal(verb("git", "git -c core.x=y clean -Xfq"), "git");
	/* -x removes untracked files too: not a clean of outputs */
	assert_string_equal(verb("git", "git clean -fdx"), "-");
	assert_string_equal(verb("git", "git clean -fdXx"), "-");
	assert_string_equal(verb("git", "git clean -fX -x"), "-");
	assert_string_equal(verb("git", "git clean -fd"), "-");
	assert_string_equal(verb("git", "git status"), "-");
	assert_string_equal(verb("git", "git rm -X"), "-");
}

static void test_scripts_and_java(void **state)
{
	(void)state;
	assert_string_equal(verb("perl", "/usr/bin/perl /usr/bin/latexmk -c"),
			    "latexmk*");
	assert_string_equal(
		verb("perl", "/usr/bin/perl -w /usr/bin/latexmk -C paper.tex"),
		"latexmk*");
	assert_string_equal(verb("perl", "perl latexmk -pdf paper.tex"), "-");
	assert_string_equal(verb("bash", "bash ./gradlew clean build"),
			    "gradlew*");
	assert_string_equal(verb("dash", "sh ./gradlew build"), "-");
	assert_string_equal(
		verb("java",
		     "/usr/lib/jvm/java-17/bin/java -classpath /usr/share/maven/boot/plexus-classworlds.jar "
		     "-Dclassworlds.conf=/usr/share/maven/bin/m2.conf "
		     "org.codehaus.plexus.classworlds.launcher.Launcher -o -q clean"),
		"mvn*");
	assert_string_equal(
		verb("java",
		     "java org.codehaus.plexus.classworlds.launcher.Launcher clean install"),
		"mvn*");
	assert_string_equal(
		verb("java",
		     "java org.codehaus.plexus.classworlds.launcher.Launcher clean:clean"),
		"mvn*");
	assert_string_equal(
		verb("java",
		     "java org.codehaus.plexus.classworlds.launcher.Launcher install"),
		"-");
	assert_string_equal(
		verb("java",
		     "java org.codehaus.plexus.classworlds.launcher.Launcher -f clean install"),
		"-");
	assert_string_equal(
		verb("java",
		     "java -cp gradle-wrapper.jar org.gradle.wrapper.GradleWrapperMain clean build"),
		"gradle*");
	assert_string_equal(
		verb("java", "java org.gradle.launcher.GradleMain :app:clean"),
		"gradle*");
	assert_string_equal(
		verb("java",
		     "java org.gradle.launcher.GradleMain build -x clean"),
		"-");
	/* a class of that name among the arguments of another program */
	assert_string_equal(verb("java", "java -jar app.jar clean"), "-");
}

static void test_programs(void **state)
{
	bool make = false, git = false, mvn = false;
	const char *p;

	(void)state;
	for (size_t i = 0; (p = lg_clean_program(i)); i++) {
		make |= strcmp(p, "make") == 0;
		git |= strcmp(p, "git") == 0;
		mvn |= strcmp(p, "mvn") == 0;
	}
	assert_true(make && git);
	assert_false(mvn); /* run by java: no executable of its own */
}

static const char *head_of(const char *name, const void *head, size_t n)
{
	const char *w = lg_build_output_head(name, head, n);

	return w ? w : "-";
}

static void test_head(void **state)
{
	unsigned char pe[0x100] = { 'M', 'Z' };
	unsigned char pyc[16] = { 0xa7, 0x0d, '\r', '\n' };
	static const char config_h[] =
		"/* config.h.  Generated from config.h.in by configure.  */\n";
	static const char config_log[] =
		"This file contains any messages produced by compilers while\n"
		"running configure, to aid debugging if configure makes a mistake.\n";
	static const char status[] =
		"#! /bin/bash\n# Generated by configure.\n";
	static const char cmake[] = "# CMAKE generated file: DO NOT EDIT!\n";
	static const char csv[] = "id,value\n1,2\n";

	(void)state;
	assert_string_equal(head_of("app",
				    "\x7f"
				    "ELF\2\1\1",
				    7),
			    "an ELF file");
	assert_string_equal(head_of("libx.a", "!<arch>\nfoo", 11),
			    "an archive of objects");
	assert_string_equal(head_of("x.class", "\xca\xfe\xba\xbe\0\0", 6),
			    "a Java class or a Mach-O fat file");
	assert_string_equal(head_of("m.wasm", "\0asm\1\0\0\0", 8),
			    "a WebAssembly module");
	assert_string_equal(head_of("a", "\xcf\xfa\xed\xfe", 4),
			    "a Mach-O file");
	pe[0x3c] = 0x80;
	memcpy(pe + 0x80, "PE\0\0", 4);
	assert_string_equal(head_of("x.exe", pe, sizeof(pe)),
			    "a PE executable");
	pe[0x80] = 'X';
	assert_string_equal(head_of("x.exe", pe, sizeof(pe)), "-");
	assert_string_equal(head_of("m.cpython-311.pyc", pyc, sizeof(pyc)),
			    "Python bytecode");
	assert_string_equal(head_of("m.csv", pyc, sizeof(pyc)), "-");
	assert_string_equal(head_of("config.h", config_h, strlen(config_h)),
			    "a generated file");
	assert_string_equal(head_of("config.log", config_log,
				    strlen(config_log)),
			    "a generated file");
	assert_string_equal(head_of("config.status", status, strlen(status)),
			    "a generated file");
	assert_string_equal(head_of("depend.make", cmake, strlen(cmake)),
			    "a generated file");
	assert_string_equal(head_of("part1.csv", csv, strlen(csv)), "-");
	assert_string_equal(
		head_of("notes.txt", "generated from the survey\n", 26), "-");
	assert_string_equal(head_of("empty", "", 0), "-");
}

static void test_latex(void **state)
{
	char tex[64];

	(void)state;
	assert_true(lg_latex_aux("paper.aux", tex, sizeof(tex)));
	assert_string_equal(tex, "paper.tex");
	assert_true(lg_latex_aux("paper.synctex.gz", tex, sizeof(tex)));
	assert_string_equal(tex, "paper.tex");
	assert_true(lg_latex_aux("a.b.fdb_latexmk", tex, sizeof(tex)));
	assert_string_equal(tex, "a.b.tex");
	assert_false(lg_latex_aux("notes.txt", tex, sizeof(tex)));
	assert_false(lg_latex_aux(".aux", tex, sizeof(tex)));
	assert_false(lg_latex_aux("paper.aux", tex, 6));
}

static void test_output_dir(void **state)
{
	char parent[256];
	const char *m = NULL;

	(void)state;
	assert_int_equal(lg_output_dir("/p/target/debug/x", false, 0, parent,
				       sizeof(parent), &m),
			 1);
	assert_string_equal(parent, "/p");
	assert_string_equal(m, "Cargo.toml|pom.xml");
	assert_int_equal(lg_output_dir("/p/target/debug/x", false, 1, parent,
				       sizeof(parent), &m),
			 0);
	/* the directory itself, when it is the one removed */
	assert_int_equal(lg_output_dir("/p/target", true, 0, parent,
				       sizeof(parent), &m),
			 1);
	assert_string_equal(parent, "/p");
	/* a file named target is no output directory */
	assert_int_equal(lg_output_dir("/p/target", false, 0, parent,
				       sizeof(parent), &m),
			 0);
	/* from the nearest: a dist/ inside a build/ */
	assert_int_equal(lg_output_dir("/q/build/dist/w.whl", false, 0, parent,
				       sizeof(parent), &m),
			 1);
	assert_string_equal(parent, "/q/build");
	assert_int_equal(lg_output_dir("/q/build/dist/w.whl", false, 1, parent,
				       sizeof(parent), &m),
			 1);
	assert_string_equal(parent, "/q");
	assert_int_equal(lg_output_dir("/s/pkg.egg-info/PKG-INFO", false, 0,
				       parent, sizeof(parent), &m),
			 1);
	assert_int_equal(lg_output_dir("/d/obj/Debug/a.dll", false, 0, parent,
				       sizeof(parent), &m),
			 1);
	assert_string_equal(m, "*.csproj|*.fsproj|*.vbproj");
	assert_int_equal(lg_output_dir("/p/src/data.csv", false, 0, parent,
				       sizeof(parent), &m),
			 0);
	assert_int_equal(lg_output_dir("/target/x", false, 0, parent,
				       sizeof(parent), &m),
			 0);
	assert_int_equal(lg_output_dir("rel/target/x", false, 0, parent,
				       sizeof(parent), &m),
			 0);
}

/* An index of version 2 holding names (sorted), hashes of hl bytes. */
static unsigned char *index_of(const char *const *names, size_t n, size_t hl,
			       const char *ext, size_t *len)
{
	unsigned char *b = calloc(1, 65536);
	size_t o = 12;

	memcpy(b, "DIRC\0\0\0\2", 8);
	b[11] = (unsigned char)n;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(names[i]), ent = 40 + hl + 2 + l;

		b[o + 40 + hl] = (unsigned char)(l >> 8);
		b[o + 41 + hl] = (unsigned char)l;
		memcpy(b + o + 40 + hl + 2, names[i], l);
		o += ent + (8 - ent % 8); /* at least one NUL */
	}
	if (ext) {
		memcpy(b + o, ext, 4);
		b[o + 7] = 4;
		o += 12;
	}
	*len = o + hl; /* the checksum */
	return b;
}

static void test_git_index(void **state)
{
	static const char *const names[] = { "Makefile", "src/a.c", "src/b/c.c",
					     "vendor/libv.so" };
	struct lg_git_index *x;
	unsigned char *b;
	size_t n;

	(void)state;
	for (size_t hl = 20; hl <= 32; hl += 12) {
		b = index_of(names, 4, hl, NULL, &n);
		x = lg_git_index_parse(b, n);
		assert_non_null(x);
		assert_int_equal(lg_git_index_count(x), 4);
		assert_true(lg_git_index_tracks(x, "Makefile", false));
		assert_true(lg_git_index_tracks(x, "src/a.c", false));
		assert_true(lg_git_index_tracks(x, "vendor/libv.so", false));
		assert_false(lg_git_index_tracks(x, "src/a.o", false));
		assert_false(lg_git_index_tracks(x, "Makefile.in", false));
		assert_false(lg_git_index_tracks(x, "src", false));
		assert_true(lg_git_index_tracks(x, "src", true));
		assert_true(lg_git_index_tracks(x, "src/b", true));
		assert_false(lg_git_index_tracks(x, "sr", true));
		assert_false(lg_git_index_tracks(x, "build", true));
		lg_git_index_free(x);
		free(b);
	}
	/* an extension is skipped; a split index is not read */
	b = index_of(names, 4, 20, "TREE", &n);
	x = lg_git_index_parse(b, n);
	assert_non_null(x);
	lg_git_index_free(x);
	free(b);
	b = index_of(names, 4, 20, "link", &n);
	assert_null(lg_git_index_parse(b, n));
	free(b);
	/* damaged: cut short, a wrong signature */
	b = index_of(names, 4, 20, NULL, &n);
	assert_null(lg_git_index_parse(b, n - 40));
	memcpy(b, "DIRX", 4);
	assert_null(lg_git_index_parse(b, n));
	free(b);
	/* no index: everything taken as tracked */
	assert_true(lg_git_index_tracks(NULL, "a", false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_tools),
		cmocka_unit_test(test_git),
		cmocka_unit_test(test_scripts_and_java),
		cmocka_unit_test(test_programs),
		cmocka_unit_test(test_head),
		cmocka_unit_test(test_latex),
		cmocka_unit_test(test_output_dir),
		cmocka_unit_test(test_git_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
