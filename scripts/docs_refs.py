#!/usr/bin/env python3
"""Checks that every reference in navd's repository leads somewhere. Needs no daemon.

Usage: docs_refs.py [ROOT]   (scripts/docs-check.sh runs it from the repository's root)

- (a) Every relative link of every Markdown file (`[text](path)`, `[text](path#anchor)`,
  `[text](#anchor)`, images too) names a file or folder that exists and, with `#anchor`, a
  heading (or an `<a id=…>`) of that Markdown file. Anchors follow GitHub's rules: the heading's text, lowercase,
  punctuation but `-` and `_` dropped, each space a `-`; a repeated heading gets `-1`, `-2`, ….
- (b) Every citation of a document's heading, written `docs/design.md, "Heading"` (a chain
  `, "Other heading"` may follow) or `docs/design.md#anchor`, in the sources, tests, scripts,
  benchmarks, fuzz targets, the client, openapi.yaml and the Markdown files, names a heading the
  document has. The same holds for any `NAME.md, "Heading"` citation (BENCHMARKS.md, …): the
  path is taken from the repository's root, or, in a Markdown file, from its folder first.
- (c) Nothing cites the old product brief by section or a tracker by number: no `DESIGN` followed
  by a section sign, no `DESIGN.md`, no section sign before a number unless a standard (an RFC,
  HTML, YAML, FIPS) is named before it on the line or at the end of the line before, and no
  "issue N".

Links inside fenced code blocks and `code spans` are examples, not references, and are skipped.
Prints one line per broken reference (`FILE:LINE: what`) and exits 1 if there is any.
"""

import os
import re
import sys

SECTION = "\u00a7"
SCANNED_DIRS = ["Sources", "Tests", "Client", "Benchmarks", "bench", "Fuzz", "scripts", "docs"]
SCANNED_FILES = ["Makefile", "Dockerfile", "openapi.yaml", "Package.swift"]
TEXT_SUFFIXES = (".swift", ".c", ".h", ".sh", ".py", ".js", ".css", ".html", ".md", ".yaml", ".yml",
                 ".json", ".dict", ".txt", ".toml", ".modulemap", "Makefile", "Dockerfile")
SKIPPED_DIRS = {".build", ".git", ".build-generator", "node_modules", "Corpus", "corpus", "Corpora"}

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CITATION = re.compile(r"([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md), \"([^\"]+)\"((?:, \"[^\"]+\")*)")
ANCHOR_CITATION = re.compile(r"([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)#([A-Za-z0-9_-]+)")
BRIEF = re.compile("DESIGN ?" + SECTION + "|DESIGN\\.md")
SECTION_NUMBER = re.compile(SECTION + r"\s*\d")
STANDARD = re.compile(r"RFC \d+|HTML|YAML|FIPS|WHATWG")
TRACKER = re.compile(r"\b[Ii]ssues? #?\d+\b")


def anchor(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def strip_code(lines):
    """The lines with fenced blocks blanked and code spans removed (line numbers kept)."""
    out, fence = [], None
    for line in lines:
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            out.append("")
            continue
        match = re.match(r"(`{3,}|~{3,})", stripped)
        if match:
            fence = match.group(1)
            out.append("")
            continue
        out.append(re.sub(r"(`+).*?\1", "", line))
    return out


_anchors = {}


def anchors_of(path):
    """The anchors of a Markdown file's headings (ATX headings outside code blocks)."""
    if path not in _anchors:
        seen, result = {}, set()
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        fence = None
        for line in lines:
            stripped = line.strip()
            if fence:
                if stripped.startswith(fence):
                    fence = None
                continue
            match = re.match(r"(`{3,}|~{3,})", stripped)
            if match:
                fence = match.group(1)
                continue
            for html in re.finditer(r"<a\s+(?:id|name)=\"([^\"]+)\"", line):
                result.add(html.group(1))
            heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if heading:
                base = anchor(heading.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                result.add(base if count == 0 else f"{base}-{count}")
                result.add("heading-text:" + re.sub(r"`", "", heading.group(1)).strip())
        _anchors[path] = result
    return _anchors[path]


def walk(root):
    for name in SCANNED_FILES:
        if os.path.isfile(os.path.join(root, name)):
            yield name
    for name in sorted(os.listdir(root)):
        if name.endswith(".md") and os.path.isfile(os.path.join(root, name)):
            yield name
    for top in SCANNED_DIRS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".build"))
            for name in sorted(files):
                if name.endswith(TEXT_SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, name), root)


def resolve(root, citing, target):
    """The file a citation names: from the citing Markdown file's folder first, else the root."""
    if citing.endswith(".md"):
        local = os.path.normpath(os.path.join(root, os.path.dirname(citing), target))
        if os.path.isfile(local):
            return local
    return os.path.normpath(os.path.join(root, target))


def check(root):
    problems = []
    this = os.path.relpath(os.path.abspath(__file__), root)
    for rel in walk(root):
        if rel == this:
            continue
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        markdown = rel.endswith(".md")
        prose = strip_code(lines) if markdown else lines
        for number, (line, text) in enumerate(zip(lines, prose), start=1):
            where = f"{rel}:{number}"
            # (a) relative Markdown links
            if markdown:
                for match in LINK.finditer(text):
                    target = match.group(1)
                    if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                        continue
                    file_part, _, fragment = target.partition("#")
                    linked = os.path.normpath(os.path.join(root, os.path.dirname(rel), file_part)) if file_part else path
                    if not os.path.exists(linked):
                        problems.append(f"{where}: link to {target}: no such file")
                    elif fragment and linked.endswith(".md") and fragment not in anchors_of(linked):
                        problems.append(f"{where}: link to {target}: {os.path.relpath(linked, root)} has no heading with that anchor")
            # (b) citations of a heading, in text (in Markdown outside code, which holds examples)
            cited_text = text if markdown else line
            for match in CITATION.finditer(cited_text):
                cited = resolve(root, rel, match.group(1))
                headings = [match.group(2)] + re.findall(r"\"([^\"]+)\"", match.group(3))
                if not os.path.isfile(cited):
                    problems.append(f"{where}: cites {match.group(1)}: no such file")
                    continue
                for heading in headings:
                    known = anchors_of(cited)
                    if "heading-text:" + heading not in known and anchor(heading) not in known:
                        problems.append(f"{where}: cites {match.group(1)}, \"{heading}\": no such heading")
            for match in ANCHOR_CITATION.finditer(cited_text):
                if markdown and "](" in cited_text[max(0, match.start() - 2):match.start()]:
                    continue  # a link: checked above
                cited = resolve(root, rel, match.group(1))
                if not os.path.isfile(cited):
                    problems.append(f"{where}: cites {match.group(1)}#{match.group(2)}: no such file")
                elif match.group(2) not in anchors_of(cited):
                    problems.append(f"{where}: cites {match.group(1)}#{match.group(2)}: no such heading")
            # (c) the brief's sections and tracker numbers
            if BRIEF.search(line):
                problems.append(f"{where}: cites the old design brief; cite docs/design.md's heading")
            for match in SECTION_NUMBER.finditer(line):
                before = line[:match.start()]
                previous = lines[number - 2] if number > 1 else ""
                if not STANDARD.search(before) and not re.search(r"(RFC \d+|HTML|YAML [\d.]+|FIPS [\d-]+)\s*$", previous):
                    problems.append(f"{where}: a section number with no standard named; cite docs/design.md's heading")
            if TRACKER.search(line):
                problems.append(f"{where}: cites a tracker issue by number; say it, or cite docs/design.md's heading")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"docs-refs: {len(problems)} reference(s) lead nowhere", file=sys.stderr)
        return 1
    print("docs-refs: every link and citation leads to a file and heading")
    return 0


if __name__ == "__main__":
    sys.exit(main())
