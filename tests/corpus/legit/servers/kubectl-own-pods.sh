# A deploy test against a cluster outside the tree (a loopback stand-in of
# the API server): it applies five pods from manifests, checks them, and
# deletes them with `kubectl delete -f` of the same manifests. What the
# session made is its own (issue 38): deleting it is no loss. A pod that was
# there before stays.
NEEDS="kubectl python3"
setup() {
	bg python3 "$TOOLS/kube_server.py" --port-file "$META/kube.port" --pods 1 --max-lifetime 120
	wait_file "$META/kube.port"
	export KUBE_SERVER=http://127.0.0.1:$(cat "$META/kube.port")
	for i in 1 2 3 4 5; do
		printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: test-%s\nspec:\n  containers:\n  - name: c\n    image: busybox\n' \
			"$i" >"pod$i.yaml"
	done
}
run() {
	set -e
	for i in 1 2 3 4 5; do kubectl --server="$KUBE_SERVER" apply --validate=false -f "pod$i.yaml"; done
	kubectl --server="$KUBE_SERVER" get pods
	for i in 1 2 3 4 5; do kubectl --server="$KUBE_SERVER" delete -f "pod$i.yaml"; done
	echo "deploy test ok"
}
verify() {
	grep -q "deploy test ok" "$OUT" || bad "the test did not finish"
	HOME=$META kubectl --server="$KUBE_SERVER" get pod pod-1 >/dev/null 2>&1 || bad "the pre-existing pod is gone"
}
