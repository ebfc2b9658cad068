#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the notify thread's time goes per answer, from `perf script -F
tid,ip,sym` of a `perf record --call-graph dwarf` run (bench/profile_rm.sh
with PARTS=1): each sample under lg_notifier_answer is put in the first part
whose function is on its stack, leaf first. Prints the parts' shares of the
answer and, given N answers and the sampling frequency, microseconds per
answer. Asserts nothing."""
import collections
import sys

# (part, functions that mark it), the first match on a stack wins (leaf first)
PARTS = [
    ("the keep's link (linkat)", ["__GI_linkat", "link_to", "linkat"]),
    ("the index entry held", ["lg_quarantine_commit", "lg_quarantine_index_add"]),
    ("the recording (held, or its line)", ["lg_record_event", "lg_record_restored"]),
    ('"came back?" (the window\'s question)', ["prune_restored", "sess_restored"]),
    ("the guard's detectors", ["lg_guard_feed"]),
    ("classify and the ignore rules", ["lg_classify", "sess_removal_facts"]),
    ("reading the path (process_vm_readv)", ["read_string", "notify_arg_where"]),
    ("the target's statx", ["notify_stat_where"]),
    ("the directory's close", ["lg_where_done"]),
    ("the validity ioctl", ["notify_still_valid"]),
    ("the answer's ioctl", ["notify_respond"]),
    ("the rest of the session's step", ["lg_session_feed"]),
]


def stacks(path):
    cur = []
    for line in open(path, errors="replace"):
        line = line.strip()
        if not line:
            if cur:
                yield cur
            cur = []
            continue
        cur.append(line)
    if cur:
        yield cur


def main():
    path = sys.argv[1]
    answers = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    freq = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    count = collections.Counter()
    total = 0
    for s in stacks(path):
        frames = [
            (f.split(None, 1)[1] if " " in f else f).split("+")[0].replace(" (inlined)", "")
            for f in s[1:]
        ]
        if "lg_notifier_answer" not in frames:
            continue
        frames = frames[: frames.index("lg_notifier_answer")]
        total += 1
        for name, marks in PARTS:
            if any(f in marks for f in frames):
                count[name] += 1
                break
        else:
            count["the notify step itself"] += 1
    if not total:
        print("notify_parts: no sample under lg_notifier_answer")
        return 1
    per = total / freq * 1e6 / answers if answers and freq else 0
    print(f"the notify step: {total} samples" + (f", about {per:.1f} us per answer" if per else ""))
    for name, n in count.most_common():
        us = f"  {n / total * per:5.2f} us" if per else ""
        print(f"  {100 * n / total:5.1f}%{us}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
