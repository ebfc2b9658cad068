# `make install` again over a prefix the last install populated before the
# session: install(1) unlinks each existing file and writes the new one.
NEEDS="make install"
setup() {
	mkdir -p proj/bin proj/include proj/share
	local i
	for i in 1 2 3 4 5; do
		printf '#!/bin/sh\necho tool%s v1\n' "$i" >proj/bin/tool$i
		printf '#define T%s 1\n' "$i" >proj/include/tool$i.h
		printf 'data %s v1\n' "$i" >proj/share/data$i.txt
	done
	{
		printf 'PREFIX ?= /usr/local\n'
		printf 'install:\n'
		printf '\tinstall -d $(PREFIX)/bin $(PREFIX)/include/tool $(PREFIX)/share/tool\n'
		printf '\tinstall -m 755 bin/* $(PREFIX)/bin/\n'
		printf '\tinstall -m 644 include/* $(PREFIX)/include/tool/\n'
		printf '\tinstall -m 644 share/* $(PREFIX)/share/tool/\n'
	} >proj/Makefile
	make -s -C proj install PREFIX="$WORK/prefix"
	sed -i 's/v1/v2/' proj/bin/* proj/share/*
}
run() {
	make -s -C proj install PREFIX="$PWD/prefix"
}
verify() {
	[ "$(prefix/bin/tool3)" = "tool3 v2" ] || bad "tool3 not upgraded"
	[ "$(ls prefix/bin prefix/include/tool prefix/share/tool | grep -c .)" -ge 15 ] || bad "files missing"
}
