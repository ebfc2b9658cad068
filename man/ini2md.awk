# SPDX-License-Identifier: MIT
# The key reference of docs/configuration.md from conf/lgrun.ini, the file
# that shows every key with its default and what it does: the source of
# lgrun.ini(5) too (man/ini2man.awk), so the three cannot drift.
#   awk -f man/inikey.awk -f man/ini2md.awk conf/lgrun.ini
# docs/configuration.md is docs/configuration.md.in with the line
# "@KEYS@" replaced by this output (make docs, checked by make docs-check).
function md(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/\|/, "\\|", s)
	gsub(/\*/, "\\*", s)
	gsub(/</, "\\&lt;", s)
	gsub(/`/, "\\`", s)
	return s
}
function flush_para() {
	if (para != "") {
		print md(para)
		print ""
		para = ""
	}
}
function flush_code() {
	if (code != "") {
		print "```"
		printf "%s", code
		print "```"
		print ""
		code = ""
	}
}
function flush_row() {
	if (row != "") {
		if (!intable) {
			print "| key | default | meaning |"
			print "|---|---|---|"
			intable = 1
		}
		print row " |"
		row = ""
	}
}
function end_table() {
	flush_row()
	if (intable)
		print ""
	intable = 0
}
function flush_all() {
	end_table()
	flush_para()
	flush_code()
}
/^; SPDX/ { next }
/^\[/ {
	flush_all()
	print "### `" $0 "`"
	print ""
	key = 0
	next
}
/^[[:space:]]*$/ { flush_all(); key = 0; next }
# a continuation of the key's comment: ";   <spaces>  ; text"
/^;  +; / {
	t = $0
	sub(/^;  +; /, "", t)
	if (key)
		row = row (row ~ /\| $/ ? "" : " ") md(t)
	else
		para = para (para == "" ? "" : " ") t
	next
}
# a key: "; name = value   ; comment" (the value may be empty)
/^; [a-z_]+ =/ {
	flush_row()
	flush_para()
	flush_code()
	inikey($0)
	name = key_name
	rest = key_value
	comment = key_comment
	gsub(/\|/, "\\|", rest)
	row = "| `" name "` | " (rest == "" ? "" : "`" rest "`") " | " md(comment)
	key = 1
	next
}
# an indented comment line: an example, shown as it is
/^;   / {
	end_table()
	flush_para()
	t = $0
	sub(/^;   /, "", t)
	code = code t "\n"
	key = 0
	next
}
# other comment lines: prose (section text, or the file's own header)
/^;/ {
	t = $0
	sub(/^; ?/, "", t)
	if (t == "") { end_table(); flush_para(); flush_code(); key = 0; next }
	end_table()
	flush_code()
	if (key) { key = 0 }
	para = para (para == "" ? "" : " ") t
	next
}
END { flush_all() }
