# A Python agent's "delete file" tool called in a loop over a listing, with
# its errors swallowed and the loop retried.
NEEDS=python3
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles models 10 ckpt_ .pt
	manifest models models
}
run() {
	python3 - <<'PY'
import os
for attempt in range(3):
    for f in sorted(os.listdir("models")):
        try:
            os.remove(os.path.join("models", f)); print("deleted", f)
        except OSError as e:
            print("failed", f, e)
PY
}
verify() {
	at_most_lost 2 models
}
