# vim in Ex mode as an agent's scripted editor: a substitution saved over
# each file (vim's backup, swap and write dance), then a second edit with
# backups kept and removed.
NEEDS=vim
setup() {
	mkdir -p conf
	local i
	for i in $(seq 1 12); do printf 'listen = 8080\nname = svc%d\ndebug = true\n' "$i" >conf/svc$i.ini; done
}
run() {
	set -e
	for f in conf/*.ini; do
		vim -N -u NONE -i NONE -es -c '%s/debug = true/debug = false/' -c 'wq' "$f"
	done
	vim -N -u NONE -i NONE -es -c 'set backup writebackup backupcopy=no' \
		-c 'argdo %s/8080/9090/ | update' -c 'qa' conf/*.ini
	rm -f conf/*~
}
verify() {
	[ "$(grep -l 'debug = false' conf/*.ini | wc -l)" = 12 ] || bad "first edit missing"
	[ "$(grep -l 9090 conf/*.ini | wc -l)" = 12 ] || bad "second edit missing"
	[ "$(ls conf | wc -l)" = 12 ] || bad "backup or swap files left: $(ls conf)"
}
