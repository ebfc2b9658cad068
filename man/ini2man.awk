# SPDX-License-Identifier: MIT
# lgrun.ini(5) from conf/lgrun.ini, the file that shows every key with its
# default and what it does: one source, so the two cannot drift.
#   awk -v date=2026-11 -v version=0.1.0 -f man/inikey.awk -f man/ini2man.awk conf/lgrun.ini
function esc(s) {
	gsub(/\\/, "\\e", s)
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}
function flush_para() {
	if (para != "") {
		print ".PP"
		print esc(para)
		para = ""
	}
}
BEGIN {
	print ".\\\" SPDX-License-Identifier: MIT"
	print ".\\\" Made from conf/lgrun.ini by man/ini2man.awk: edit that file."
	printf ".TH LGRUN.INI 5 \"%s\" \"lgrun %s\" \"File Formats\"\n", date, version
	print ".SH NAME"
	print "lgrun.ini \\- configuration of lgrun, the loop guard for AI agents"
	print ".SH SYNOPSIS"
	print "\\fI/etc/lgrun/lgrun.ini\\fR, \\fB$LGRUN_CONFIG\\fR, \\fBlgrun \\-\\-config\\fR \\fIFILE\\fR"
	print ".SH DESCRIPTION"
	insec = 0
}
/^; SPDX/ { next }
/^\[/ {
	flush_para()
	if (!insec)
		print ".SH SECTIONS AND KEYS"
	insec = 1
	print ".SS " esc($0)
	key = 0
	next
}
/^[[:space:]]*$/ { flush_para(); key = 0; next }
# a continuation of the key's comment: ";   <spaces>  ; text"
/^;  +; / {
	t = $0
	sub(/^;  +; /, "", t)
	if (key)
		print esc(t)
	else
		para = para (para == "" ? "" : " ") t
	next
}
# a key: "; name = value   ; comment" (the value may be empty)
/^; [a-z_]+ =/ {
	flush_para()
	inikey($0)
	name = key_name
	rest = key_value
	comment = key_comment
	print ".TP"
	if (rest == "")
		print "\\fB" esc(name) "\\fR ="
	else
		print "\\fB" esc(name) "\\fR = " esc(rest)
	if (comment != "")
		print esc(comment)
	key = 1
	next
}
# other comment lines: prose (section text, or the file's own header)
/^;/ {
	t = $0
	sub(/^; ?/, "", t)
	if (t == "") { flush_para(); next }
	if (key) { print esc(t); next }
	para = para (para == "" ? "" : " ") t
	next
}
# an uncommented line (an example): shown as it is
{
	flush_para()
	print ".nf"
	print esc($0)
	print ".fi"
}
END {
	flush_para()
	print ".SH FILES"
	print "\\fI/etc/lgrun/lgrun.ini\\fR and \\fI/etc/lgrun/profiles/\\fINAME\\fR.ini"
	print "(\\fB\\-\\-profile\\fR \\fINAME\\fR)."
	print ".SH SEE ALSO"
	print ".BR lgrun (1),"
	print ".BR lgctl (1)"
}
