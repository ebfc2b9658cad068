# A unittest suite against a local REST service started before the
# session: several tests GET the same resource and get the same answer.
NEEDS=python3
setup() {
	bg python3 "$TOOLS/items_server.py" --port-file "$META/port" --ready-after 0 --max-lifetime 120
	wait_file "$META/port"
	export API_PORT=$(cat "$META/port")
}
run() {
	python3 "$TOOLS/api_suite.py"
}
verify() {
	grep -q '^OK$' "$ERR" || bad "the suite did not pass"
}
