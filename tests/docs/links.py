#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every relative link and #anchor of README.md, HACKING.md and docs/*.md
resolves: the file exists, and an anchor names a heading of the page it
points into (GitHub's way: lowercase, spaces to '-', punctuation dropped,
a repeated heading gets -1, -2...). Prints the broken ones and exits 1."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HEADING = re.compile(r'^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$')


def slug(text):
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)  # a link: its text
    text = re.sub(r'<[^>]+>', '', text)
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def strip_code(lines):
    """The lines outside fenced code blocks, inline code removed (a link
    inside backticks is not a link); numbered from 1."""
    out, fence = [], None
    for n, line in enumerate(lines, 1):
        m = re.match(r'^ {0,3}(`{3,}|~{3,})', line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * len(m.group(1))
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            out.append((n, line))
    return out


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, names = {}, set()
        with open(path, encoding='utf-8') as f:
            for _, line in strip_code(f.read().split('\n')):
                m = HEADING.match(line)
                if not m:
                    continue
                s = slug(m.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                names.add(s if k == 0 else '%s-%d' % (s, k))
        _anchors[path] = names
    return _anchors[path]


def pages():
    out = [os.path.join(ROOT, p) for p in ('README.md', 'HACKING.md')]
    d = os.path.join(ROOT, 'docs')
    if os.path.isdir(d):
        out += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith('.md'))
    return [p for p in out if os.path.exists(p)]


def main():
    broken, n = [], 0
    for page in pages():
        rel = os.path.relpath(page, ROOT)
        with open(page, encoding='utf-8') as f:
            lines = f.read().split('\n')
        for ln, line in strip_code(lines):
            line = re.sub(r'`[^`]*`', '', line)
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
                    continue  # http:, https:, mailto:
                n += 1
                path, _, anchor = target.partition('#')
                dest = page if path == '' else os.path.normpath(
                    os.path.join(os.path.dirname(page), path))
                if not os.path.exists(dest):
                    broken.append('%s:%d: %s: no such file' % (rel, ln, target))
                    continue
                if anchor and dest.endswith('.md'):
                    if anchor not in anchors(dest):
                        broken.append('%s:%d: %s: no heading #%s in %s' % (
                            rel, ln, target, anchor, os.path.relpath(dest, ROOT)))
    for b in broken:
        print(b)
    if broken:
        print('docs links: %d broken of %d' % (len(broken), n))
        return 1
    print('docs links: %d relative links, all resolve' % n)
    return 0


if __name__ == '__main__':
    sys.exit(main())
