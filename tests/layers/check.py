#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make layers: every #include of supervisor/ and preload/ crosses only into
what HACKING.md's map allows ("The map": each folder's "includes from"
line; a folder may always include its own files). A line names folders
(`lib/`, `guard/`) and may narrow one to headers (`seccomp/` (`pathres.h`)):
the check is by folder, the narrowing is the reader's. Prints each include
that crosses into a folder its row does not name, and exits 1 if any does.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def folders_of_map():
    """{folder: set of folders it may include from}, from HACKING's map:
    a list item "- `supervisor/X/`: what" followed by its sub-item
    "  - includes from: ..." (which may wrap over several lines)."""
    text = open(os.path.join(ROOT, "HACKING.md"), encoding="utf-8").read()
    start = text.index("## The map")
    end = text.index("\n## ", start + 1)
    allowed = {}
    folder = None
    inc = None
    for line in text[start:end].splitlines() + [""]:
        m = re.match(r"^- `([^`]+)`[,:]", line)
        if m or not line.startswith("  "):
            if folder is not None and inc is not None:
                allowed[folder] = names_in(inc)
            folder, inc = None, None
        if m:
            folder = m.group(1).rstrip("/")
            if folder.startswith("supervisor/"):
                folder = folder[len("supervisor/"):]
            continue
        if folder is None:
            continue
        s = line.strip()
        if s.startswith("- includes from:"):
            inc = s[len("- includes from:"):]
        elif inc is not None:
            inc += " " + s
    return allowed


def names_in(cell):
    names = set()
    for tok in re.findall(r"`([^`]+)`", cell):
        m = re.match(r"^(?:supervisor/)?([a-z0-9_]+)/", tok.strip())
        if m:
            names.add(m.group(1))
    return names


def folder_of_include(src_dir, inc):
    """The folder an include of a file in src_dir names (supervisor/ or
    preload/ or bpf/), or None for one outside the project."""
    if inc.startswith("../"):
        path = os.path.normpath(os.path.join(src_dir, inc))
        rel = os.path.relpath(path, ROOT)
        parts = rel.split(os.sep)
        if parts[0] == "supervisor" and len(parts) > 2:
            return parts[1]
        return parts[0]
    first = inc.split("/")[0]
    if "/" not in inc:
        return None  # a file of its own folder
    if os.path.isdir(os.path.join(ROOT, "supervisor", first)):
        return first
    if os.path.isdir(os.path.join(ROOT, first)):
        return first
    return None


def main():
    allowed = folders_of_map()
    bad = []
    checked = 0
    for top in ("supervisor", "preload"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            rel = os.path.relpath(dirpath, os.path.join(ROOT, "supervisor"))
            folder = "preload" if top == "preload" else rel.split(os.sep)[0]
            if folder == "." and not [f for f in files if f.endswith((".c", ".h"))]:
                continue  # supervisor/ itself holds folders only
            if folder not in allowed:
                bad.append(f"{os.path.relpath(dirpath, ROOT)}: a folder the map in HACKING.md does not name")
                continue
            for name in sorted(files):
                if not name.endswith((".c", ".h", ".def")):
                    continue
                path = os.path.join(dirpath, name)
                for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    checked += 1
                    to = folder_of_include(dirpath, m.group(1))
                    if to is None or to == folder or to in allowed[folder]:
                        continue
                    bad.append(f"{os.path.relpath(path, ROOT)}:{n}: includes {m.group(1)} ({to}/), which HACKING's map does not let {folder}/ include from")
    for b in bad:
        print("layers:", b)
    print(f"layers: {checked} includes of {len(allowed)} folders checked against HACKING.md's map: {'ok' if not bad else str(len(bad)) + ' cross it'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
