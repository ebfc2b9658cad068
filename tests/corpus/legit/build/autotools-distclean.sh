# A small autoconf project configured and built before the session
# (./configure && make: config.status, config.log, config.h, the Makefile,
# objects, the program), then, under lgrun, what an agent does to start
# over: `make distclean`, then `./configure && make` again. distclean
# removes configure's outputs, which predate the session.
NEEDS="autoconf make cc"
TIMEOUT=120
setup() {
	mkdir -p proj
	cat >proj/configure.ac <<'AC'
AC_INIT([hello], [1.0])
AC_CONFIG_SRCDIR([hello.c])
AC_CONFIG_HEADERS([config.h])
AC_PROG_CC
AC_CHECK_HEADERS([unistd.h])
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
AC
	cat >proj/Makefile.in <<'MK'
CC = @CC@
CFLAGS = @CFLAGS@
DEFS = @DEFS@
OBJS = hello.o greet.o

hello: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS)
.c.o:
	$(CC) $(CFLAGS) $(DEFS) -I. -c $<
clean:
	rm -f hello $(OBJS)
distclean: clean
	rm -f config.status config.log config.h Makefile
.PHONY: clean distclean
MK
	printf '#include "config.h"\n#include <stdio.h>\nvoid greet(void);\nint main(void) { greet(); return 0; }\n' >proj/hello.c
	printf '#include "config.h"\n#include <stdio.h>\nvoid greet(void) { puts("hello, " PACKAGE_NAME); }\n' >proj/greet.c
	(cd proj && autoheader && autoconf && ./configure -q && make -s)
	manifest src proj/configure.ac proj/Makefile.in proj/hello.c proj/greet.c proj/configure
}
run() {
	set -e
	cd proj
	make -s distclean
	test ! -e config.status
	./configure -q
	make -s
	test "$(./hello)" = "hello, hello"
}
verify() {
	[ -x proj/hello ] || bad "not rebuilt"
	none_lost src
}
