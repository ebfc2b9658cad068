# SPDX-License-Identifier: MIT
# conf/lgrun.ini's key lines, read once for man/ini2man.awk (lgrun.ini(5))
# and man/ini2md.awk (docs/configuration.md): loaded first with -f.
#
# A key line is "; name = value   ; comment" (the value may be empty).
# inikey(line) sets key_name, key_value and key_comment from it.
function inikey(line,    rest) {
	sub(/^; /, "", line)
	key_name = line
	sub(/ =.*/, "", key_name)
	rest = line
	sub(/^[a-z_]+ =[ ]*/, "", rest)
	key_comment = ""
	if (match(rest, /(^|  +); /)) {
		key_comment = substr(rest, RSTART + RLENGTH)
		rest = substr(rest, 1, RSTART - 1)
	}
	sub(/[ ]+$/, "", rest)
	key_value = rest
}
