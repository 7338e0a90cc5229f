#!/usr/bin/env python3
"""Checks the relative links of README.md and docs/*.md: every linked file exists, and every
#anchor names a heading of its Markdown file (GitHub's rule: lower case, punctuation other than
hyphens and underscores dropped, spaces to hyphens; headings inside code blocks do not count).
Prints each broken link and exits 1 if there is one.
usage: scripts/check-doc-links.py [ROOT]   (default: the repository root)"""
import glob
import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path, cache={}):
    if path not in cache:
        found, fenced = set(), False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("```"):
                    fenced = not fenced
                elif not fenced and line.startswith("#"):
                    text = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower())
                    found.add(text.replace(" ", "-"))
        cache[path] = found
    return cache[path]


def broken_links(root):
    files = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    for md in files:
        with open(md, encoding="utf-8") as f:
            text = f.read()
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            line = text.count("\n", 0, m.start()) + 1
            where = f"{os.path.relpath(md, root)}:{line}"
            if not os.path.exists(resolved):
                yield f"{where}: {target}: no such file"
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                yield f"{where}: {target}: no heading '{anchor}' in {os.path.relpath(resolved, root)}"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    bad = list(broken_links(os.path.abspath(root)))
    for b in bad:
        print(b)
    print(f"doc links: {len(bad)} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
