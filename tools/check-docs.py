#!/usr/bin/env python3
"""Check that the repository's text describes the software as it is.

Usage: tools/check-docs.sh [--fusec BIN [--generated-only]] [--root DIR]
                           [--exclude REGEX]... [PATH...]

Three checks over the tracked files (git ls-files; every file under --root
when it is not a git work tree), or over the tracked files under PATH...:

  narration  a line tells how the project was built (numbered work periods
             or stages, calls to a lent machine, scripts in an ignored
             folder) instead of what the software does;
  citation   a line cites a file that is not in the repository: a shouting
             FOO.md, a folder beside the checkout, or a repository path such
             as docs/x.md or tools/x.sh that does not exist;
  link       a relative markdown link in a .md file points at nothing, or
             its #anchor at no heading of the page (GitHub's heading ids);
  section    a .md file named with a quoted section title (docs/x.md,
             "Title", or [x](x.md), "Title") has no heading of that title.

With --fusec BIN, the narration and citation checks also run over what fusec
writes for every examples/*.fuse (the .cu and .h of the cuda target and the
.c of the nvrtc target): generated code reaches the users' builds.

Lines that match an entry of tools/check-docs.allow are not reported.
--exclude REGEX (repeatable) leaves out the paths it matches, e.g.
--exclude '^compiler/emit_cuda' while another change rewrites those files.
Exit status: 0 when nothing is found, 1 when something is, 2 on bad usage.
"""
import argparse
import bisect
import fnmatch
import functools
import os
import re
import subprocess
import sys
import tempfile

ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth "
            "eleventh twelfth thirteenth fourteenth fifteenth sixteenth "
            "seventeenth eighteenth nineteenth twentieth").split()

# (name, pattern): a line of prose or code that matches narrates history.
# Case-insensitive.  Each pattern is narrow enough that a description of the
# software does not need it; the allow file holds the few exceptions.
NARRATION = [
    ("work period", r"\bsess[i]ons?\b"),
    ("numbered stage", r"\bstages? [0-9]+\b"),
    ("lent machine", r"\bdevice[- ]ca[l]ls?\b"),
    ("ignored folder", r"(^|[^\w])[.]gpu/"),
    ("ignored script", r"\bexp/s[0-9]+"),
    ("ordinal of the work", r"\b(" + "|".join(ORDINALS[10:]) + r")\b"),
    ("ordinal of the work", r"\b(" + "|".join(ORDINALS) + r"|[0-9]+(st|nd|rd|th)) "
     r"(run|call|calls) of (the|this|that) (sess[i]on|work|day)\b"),
    ("history", r"\b(not (yet )?landed|measured, not landed|side experiment)\b"),
    ("history", r"\bearlier (run|runs|sess[i]on|call|calls)\b"),
    ("history", r"\bwe (measured|tried|ran|found)\b"),
    ("history", r"\bfresh clone of `?[0-9a-f]{7}"),
]
NARRATION = [(n, re.compile(p, re.IGNORECASE)) for n, p in NARRATION]

SHOUTING_MD = re.compile(r"(?<![\w/.-])([A-Z][A-Z0-9_-]*\.md)\b")
SHARED = re.compile(r"[.][.]/shar[e]d\b")  # the folder beside the checkout
# A repository path in text: a top-level folder of the project, then a name.
REPO_PATH = re.compile(
    r"(?:(?<=^)|(?<=[\s`'\"\[<,=:]))"
    r"((?:docs|tools|compiler|runtime|tests|examples|cmake|grammar)/[A-Za-z0-9_./+-]*[A-Za-z0-9_/])")
MD_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")

# Only paths with a source file's extension, or a folder's trailing '/', are
# checked: build outputs (build/x, examples/c/make/build/x) are not in git.
PATH_EXT = (".md", ".sh", ".py", ".c", ".h", ".fuse", ".cu", ".inc", ".def", ".l", ".y",
            ".txt", ".cmake", ".in", ".test", ".1", ".svg", ".allow")
TEXT_EXT_SKIP = (".svg", ".png", ".jpg", ".gz", ".pdf")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                             check=True)
        inside = subprocess.run(["git", "-C", root, "rev-parse", "--show-prefix"],
                                capture_output=True, text=True, check=True).stdout.strip()
        if inside:  # root is a folder inside some other repository
            raise subprocess.CalledProcessError(1, "git")
        return sorted(p for p in out.stdout.decode().split("\0") if p)
    except (subprocess.CalledProcessError, FileNotFoundError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x != ".git"]
            for n in names:
                files.append(os.path.relpath(os.path.join(d, n), root))
        return sorted(files)


def load_allow(path):
    """Each entry: PATH-GLOB, whitespace, REGEX (the rest of the line)."""
    rules = []
    if not os.path.exists(path):
        return rules
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split(None, 1)
            if len(parts) != 2:
                sys.exit(f"{path}:{n}: want 'PATH-GLOB REGEX'")
            rules.append((parts[0], re.compile(parts[1])))
    return rules


def allowed(rules, rel, line):
    return any(fnmatch.fnmatchcase(rel, g) and r.search(line) for g, r in rules)


class Checker:
    def __init__(self, root, rules, names):
        self.root = root
        self.rules = rules
        self.basenames = {os.path.basename(p) for p in names}
        self.found = 0

    def report(self, rel, n, kind, what, line):
        self.found += 1
        print(f"{rel}:{n}: {kind}: {what}: {line.strip()[:160]}")

    def path_exists(self, rel, p):
        """A path in text names the repository's root or the file's folder."""
        p = p.rstrip(".")
        return any(os.path.exists(os.path.join(self.root, d, p))
                   for d in ("", os.path.dirname(rel)))

    def scan_text(self, rel, text, paths=True):
        for n, line in enumerate(text.splitlines(), 1):
            if allowed(self.rules, rel, line):
                continue
            for name, rx in NARRATION:
                m = rx.search(line)
                if m:
                    self.report(rel, n, "narration", f"{name} '{m.group(0)}'", line)
                    break
            m = SHARED.search(line)
            if m:
                self.report(rel, n, "citation", f"'{m.group(0)}' is outside the repository", line)
            for m in SHOUTING_MD.finditer(line):
                if m.group(1) not in self.basenames:
                    self.report(rel, n, "citation", f"no file {m.group(1)} in the repository", line)
            if not paths:
                continue
            for m in REPO_PATH.finditer(line):
                p = m.group(1)
                rest = line[m.end():m.end() + 1]
                if rest in ("*", "{", "$", "<", "%") or "//" in p:
                    continue  # a pattern or a template, not a path
                if not (p.endswith("/") or p.rstrip(".").endswith(PATH_EXT)):
                    continue  # a build output or a program name, not a source path
                if any(re.fullmatch(r"[A-Z]+", c.split(".")[0]) for c in p.split("/")[1:]):
                    continue  # a placeholder such as examples/NAME.fuse
                if not self.path_exists(rel, p):
                    self.report(rel, n, "citation", f"no path {p} in the repository", line)

    def scan_links(self, rel, text):
        base = os.path.dirname(rel)
        in_code = False
        for n, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            if in_code or allowed(self.rules, rel, line):
                continue
            for m in MD_LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                target, _, anchor = target.partition("#")
                path = os.path.normpath(os.path.join(self.root, base, target)) if target \
                    else os.path.join(self.root, rel)
                if not os.path.exists(path):
                    self.report(rel, n, "link", f"'{m.group(1)}' points at nothing", line)
                elif anchor and path.endswith(".md") and anchor not in heading_ids(heading_titles(path)):
                    self.report(rel, n, "link", f"'{m.group(1)}': no heading of {os.path.basename(path)} "
                                f"has the id '{anchor}'", line)

    def scan_sections(self, rel, text):
        """A quoted section title after a .md file's name must be one of
        its headings; the file is looked for beside rel, at the root and
        under docs/."""
        starts = [0]
        for line in text.splitlines(True):
            starts.append(starts[-1] + len(line))
        for m in SECTION_REF.finditer(text):
            n = bisect.bisect_right(starts, m.start())
            line = text[starts[n - 1]:starts[n]]
            if allowed(self.rules, rel, line):
                continue
            # a title across lines of a comment: the comment marks go
            title = " ".join(re.sub(r"\n\s*(?:#|//|\*)?", " ", m.group(2)).split())
            name = m.group(1)
            path = next((q for q in (os.path.join(self.root, os.path.dirname(rel), name),
                                     os.path.join(self.root, name),
                                     os.path.join(self.root, "docs", name)) if os.path.isfile(q)), None)
            if path and title not in heading_titles(path):
                self.report(rel, n, "section", f"{name} has no section \"{title}\"", line)


@functools.lru_cache(maxsize=None)
def heading_titles(path):
    """The titles of a markdown file's headings (outside code blocks)."""
    titles, in_code = [], False
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lstrip().startswith("```"):
                    in_code = not in_code
                elif not in_code and re.match(r"#{1,6} ", line):
                    titles.append(line.lstrip("#").strip())
    except OSError:
        pass
    return tuple(titles)


def heading_ids(titles):
    """GitHub's ids of those headings: lowercase, punctuation dropped,
    spaces as hyphens, a repeated id numbered -1, -2, ..."""
    ids, seen = set(), {}
    for t in titles:
        base = re.sub(r"[^\w\- ]", "", t.lower()).replace(" ", "-")
        n = seen.get(base, 0)
        seen[base] = n + 1
        ids.add(base if n == 0 else f"{base}-{n}")
    return ids


# a .md file and a quoted section title after it: `x.md, "Title"` or
# `[x](x.md), "Title"`, across a line break
SECTION_REF = re.compile(r"([\w./-]+\.md)(?:\]\([^)\s]*\))?\)?,\s+\"([^\"]+)\"")


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--fusec", help="also check what this fusec writes for every example")
    ap.add_argument("--exclude", action="append", default=[], metavar="REGEX")
    ap.add_argument("--allow", help="allow file (default: ROOT/tools/check-docs.allow)")
    ap.add_argument("--generated-only", action="store_true",
                    help="with --fusec: check only what fusec writes, not the tracked files")
    ap.add_argument("paths", nargs="*", help="check only the tracked files under these")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    allow = a.allow or os.path.join(root, "tools", "check-docs.allow")
    rules = load_allow(allow)
    excludes = [re.compile(x) for x in a.exclude]
    names = tracked_files(root)
    chk = Checker(root, rules, names)
    def under_root(p):
        """PATH from the current folder when it lies under the root there,
        else from the root (tests run the check from elsewhere)."""
        here_p = os.path.abspath(p)
        if not (os.path.exists(here_p) and (here_p + "/").startswith(root + "/")):
            here_p = os.path.join(root, p)
        return os.path.normpath(os.path.relpath(here_p, root))
    filters = [under_root(p) for p in a.paths]

    def selected(rel):
        if any(x.search(rel) for x in excludes):
            return False
        return not filters or any(f == "." or rel == f or rel.startswith(f + "/") for f in filters)

    nfiles = 0
    for rel in names:
        full = os.path.join(root, rel)
        if a.generated_only or not selected(rel) or not os.path.isfile(full) \
                or rel.endswith(TEXT_EXT_SKIP):
            continue
        text = read_text(full)
        if text is None:
            continue
        nfiles += 1
        chk.scan_text(rel, text)
        if rel.endswith(".md"):
            chk.scan_links(rel, text)
        chk.scan_sections(rel, text)

    ngen = 0
    if a.generated_only and not a.fusec:
        ap.error("--generated-only needs --fusec")
    if a.fusec:
        examples = [r for r in names if re.match(r"^examples/[^/]+\.fuse$", r)]
        with tempfile.TemporaryDirectory() as tmp:
            for rel in examples:
                stem = os.path.splitext(os.path.basename(rel))[0]
                for target, ext in (("cuda", "cu"), ("nvrtc", "c")):
                    out = os.path.join(tmp, f"{stem}.{target}.{ext}")
                    r = subprocess.run([a.fusec, f"--target={target}", os.path.join(root, rel),
                                        "-o", out], capture_output=True, text=True)
                    if r.returncode != 0:
                        print(f"{rel}: fusec --target={target} failed: {r.stderr.strip()[:300]}")
                        chk.found += 1
                        continue
                    outs = [out] + ([os.path.splitext(out)[0] + ".h"] if target == "cuda" else [])
                    for o in outs:
                        if not os.path.exists(o):
                            continue
                        gen = f"generated/{os.path.basename(o)}"
                        if any(x.search(gen) for x in excludes):
                            continue
                        ngen += 1
                        chk.scan_text(gen, read_text(o), paths=True)

    print(f"check-docs: {nfiles} files" + (f", {ngen} generated files" if a.fusec else "") +
          f": {chk.found} finding{'s' if chk.found != 1 else ''}")
    return 1 if chk.found else 0


if __name__ == "__main__":
    sys.exit(main())
