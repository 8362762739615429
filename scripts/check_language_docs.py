#!/usr/bin/env python3
"""Fails when a public name of the kernel DSL is not documented in docs/language.md.

The public names are read from the front-end headers (include/ctile/frontend/*.hpp): every class,
alias, function, constant and static member declared in namespace ctile (and its non-detail
namespaces, such as ctile::rounding), and every public member of those classes, including the
names that macro invocations like CTILE_UNARY_FN(exp, Exp) declare. Left out: namespace detail,
private and protected members, constructors, destructors, operators and friends (the operator
table documents those), and declarations marked `// doc: internal` on their first line or the
line before (public for technical reasons only, such as the IR value id behind a tile).

A name counts as documented when it appears as a code span in an entry of the reference: a
heading, or the first cell of a table row. Spans are read without a `ct::`/`ctile::` prefix,
template arguments or call arguments, so `Tile<T>::full(shape, v)` documents `Tile::full` and
`ct::maximum(a, b)` documents `maximum`. Class members are written `Class::member`.

It also checks the links into the reference: every `language.md#anchor` link in README.md and
docs/ (tutorials included) must name a heading of the reference, and every tile-kernel tutorial
(docs/tutorials/*.md except simt_*) must link to the entries it uses, so at least to one.

  scripts/check_language_docs.py                      check the repository (exit 1 on a gap)
  scripts/check_language_docs.py --list               print the public names found
  scripts/check_language_docs.py --headers DIR --doc FILE [--docs-root DIR]
                                                      check other files (the self-test)
"""
import argparse
import pathlib
import re
import sys

KEYWORDS_BEFORE_PAREN = {
    "decltype", "requires", "noexcept", "alignas", "sizeof", "alignof", "static_assert", "static_cast",
    "const_cast", "reinterpret_cast", "dynamic_cast", "if", "for", "while", "switch", "return", "typeid",
}
TOKEN_RE = re.compile(r"[A-Za-z_]\w*|\d[\w.']*|::|->|&&|\|\||<<=|>>=|\.\.\.|[{}()\[\]<>;:,=~&|^!*+\-/%.?#]")


class Decl:
    def __init__(self, name, line, scope):
        self.name, self.line, self.scope = name, line, scope

    def qualified(self):
        return "::".join(self.scope + [self.name])


def strip_source(text):
    """Removes comments, string and char literals and preprocessor lines, keeping line numbers.

    Returns (code, internal_lines, macros): the lines marked `doc: internal`, and for each
    function-like macro defined here whose first parameter is NAME, the macro's name.
    """
    internal, macros = set(), set()
    out, i, line, n = [], 0, 1, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # A preprocessor directive, continuation lines included.
            j = i
            directive = []
            while j < n:
                k = text.find("\n", j)
                k = n if k < 0 else k
                directive.append(text[j:k])
                if k > j and text[k - 1] == "\\":
                    out.append("\n")
                    line += 1
                    j = k + 1
                    continue
                j = k
                break
            m = re.match(r"#\s*define\s+(\w+)\(\s*NAME\b", directive[0])
            if m:
                macros.add(m.group(1))
            i = j
            continue
        if c == "/" and text.startswith("//", i):
            k = text.find("\n", i)
            k = n if k < 0 else k
            if "doc: internal" in text[i:k]:
                internal.add(line)
            i = k
            continue
        if c == "/" and text.startswith("/*", i):
            k = text.find("*/", i + 2)
            k = n if k < 0 else k + 2
            chunk = text[i:k]
            if "doc: internal" in chunk:
                internal.add(line)
            out.append("\n" * chunk.count("\n"))
            line += chunk.count("\n")
            i = k
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append('""' if c == '"' else "0")
            i = j + 1
            continue
        out.append(c)
        if c == "\n":
            line += 1
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        i += 1
    return "".join(out), internal, macros


def tokenize(code):
    tokens, line = [], 1
    pos = 0
    for m in TOKEN_RE.finditer(code):
        line += code.count("\n", pos, m.start())
        pos = m.start()
        tokens.append((m.group(0), line))
    return tokens


def skip_balanced(toks, i, open_, close):
    """toks[i] is `open_`; returns the index after its matching `close`."""
    depth = 0
    while i < len(toks):
        if toks[i][0] == open_:
            depth += 1
        elif toks[i][0] == close:
            depth -= 1
            if depth == 0:
                return i + 1
        elif open_ == "<" and toks[i][0] == ">>":
            depth -= 2
            if depth <= 0:
                return i + 1
        i += 1
    return i


def strip_template_and_requires(toks):
    i = 0
    while i < len(toks):
        t = toks[i][0]
        if t == "template" and i + 1 < len(toks) and toks[i + 1][0] == "<":
            i = skip_balanced(toks, i + 1, "<", ">")
        elif t == "requires":
            i += 1
            if i < len(toks) and toks[i][0] == "(":
                i = skip_balanced(toks, i, "(", ")")
                continue
            while i < len(toks):  # a constraint without parentheses: qualified ids, template args, && / ||
                while i < len(toks) and (re.match(r"[A-Za-z_]", toks[i][0]) or toks[i][0] == "::"):
                    i += 1
                if i < len(toks) and toks[i][0] == "<":
                    i = skip_balanced(toks, i, "<", ">")
                if i < len(toks) and toks[i][0] in ("&&", "||"):
                    i += 1
                    continue
                break
        else:
            break
    return toks[i:]


def declared_name(toks, class_name):
    """The name a declaration (its tokens, without the final `;` or `{`) introduces, or None."""
    toks = strip_template_and_requires(toks)
    if not toks:
        return None
    words = [t for t, _ in toks]
    if words[0] in ("friend", "static_assert", "namespace", "return", "typedef", "public", "private", "protected"):
        return None
    if words[0] == "using":
        if len(words) >= 3 and words[2] == "=":
            return toks[1]
        return None  # using Base::Base; using namespace x;
    if "operator" in words:
        return None
    angle = 0
    for k, w in enumerate(words):
        if w == "<":
            angle += 1
        elif w == ">":
            angle -= 1
        elif w == "(" and angle <= 0:
            if k == 0:
                return None
            prev = words[k - 1]
            if prev in KEYWORDS_BEFORE_PAREN or not re.match(r"[A-Za-z_]\w*$", prev):
                continue
            if k >= 2 and words[k - 2] == "~":
                return None
            if prev == class_name:
                return None  # a constructor
            return toks[k - 1]
        elif w in ("=", "{") and angle <= 0:
            break
    # A variable or data member: the identifier before `=` / `{` / the end.
    end = len(words)
    for k, w in enumerate(words):
        if w in ("=", "{"):
            end = k
            break
    for k in range(end - 1, -1, -1):
        if re.match(r"[A-Za-z_]\w*$", words[k]) and words[k] not in ("const", "constexpr", "inline", "static"):
            if class_name is not None and "static" not in words[:end]:
                return None  # a non-static data member is private state, not API
            return toks[k]
    return None


def public_names(header_paths):
    """Yields (qualified name, file, line) for every public DSL name in the headers."""
    for path in header_paths:
        code, internal, macros = strip_source(path.read_text())
        toks = tokenize(code)
        # Scope stack entries: ("ns", name) | ("class", name, access) | ("skip",)
        stack = []
        decl = []
        i = 0

        def scope_names():
            names = []
            for s in stack:
                if s[0] == "ns":
                    ns = re.sub(r"^ctile(::|$)", "", s[1])
                    if ns:
                        names.append(ns)
                elif s[0] == "class":
                    names.append(s[1])
            return names

        def visible():
            if not stack or any(s[0] == "skip" for s in stack):
                return False
            if not any(s[0] == "ns" and re.match(r"ctile(::|$)", s[1]) for s in stack):
                return False
            top = stack[-1]
            return top[0] == "ns" or top[2] == "public"

        def emit(name_tok):
            if name_tok is None or not visible():
                return None
            name, line = name_tok
            if line in internal or (line - 1) in internal:
                return None
            return (Decl(name, line, scope_names()).qualified(), path, line)

        while i < len(toks):
            t, line = toks[i]
            if stack and stack[-1][0] == "skip":
                if t == "{":
                    stack.append(("skip",))
                elif t == "}":
                    stack.pop()
                i += 1
                continue
            in_class = bool(stack) and stack[-1][0] == "class"
            if in_class and t in ("public", "private", "protected") and i + 1 < len(toks) and toks[i + 1][0] == ":":
                stack[-1] = ("class", stack[-1][1], t)
                decl = []
                i += 2
                continue
            if t in macros and i + 2 < len(toks) and toks[i + 1][0] == "(" and not decl:
                r = emit(toks[i + 2])
                if r:
                    yield r
                i = skip_balanced(toks, i + 1, "(", ")")
                continue
            if t == "(":
                j = skip_balanced(toks, i, "(", ")")
                decl.extend(toks[i:j])
                i = j
                continue
            if t == ";":
                r = emit(declared_name(decl, stack[-1][1] if in_class else None))
                if r:
                    yield r
                decl = []
                i += 1
                continue
            if t == "}":
                if stack:
                    stack.pop()
                decl = []
                i += 1
                continue
            if t == "{":
                words = [w for w, _ in strip_template_and_requires(decl)]
                if words[:1] == ["namespace"]:
                    parts = [w for w in words[1:] if w != "::"]
                    if not parts or "detail" in parts:
                        stack.append(("skip",))  # namespace detail, or an anonymous namespace
                    else:
                        stack.append(("ns", "::".join(parts)))  # one entry per brace
                elif words and words[0] == "enum":
                    name = words[2] if len(words) > 2 and words[1] in ("class", "struct") else words[1]
                    r = emit((name, decl[0][1]))
                    if r:
                        yield r
                    stack.append(("skip",))
                elif words and words[0] in ("class", "struct") and "(" not in words:
                    ident = [w for w in words[1:] if re.match(r"[A-Za-z_]\w*$", w) and w not in ("nodiscard", "final")]
                    name = ident[0] if ident else ""
                    name_line = next((ln for w, ln in decl if w == name), line)
                    r = emit((name, name_line))
                    if r:
                        yield r
                    stack.append(("class", name, "public" if words[0] == "struct" else "private"))
                else:
                    r = emit(declared_name(decl, stack[-1][1] if in_class else None))
                    if r:
                        yield r
                    stack.append(("skip",))
                decl = []
                i += 1
                continue
            decl.append((t, line))
            i += 1


def documented_names(doc_text):
    """The names documented in the reference's entries: code spans in headings and first table cells."""
    names = set()
    in_fence = False
    for line in doc_text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if re.match(r"#{1,6} ", line):
            entry = line
        elif line.startswith("|"):
            cells = line.split("|")
            entry = cells[1] if len(cells) > 2 else ""
        else:
            continue
        for span in re.findall(r"`([^`]+)`", entry):
            names.update(normalise_span(span))
    return names


def github_anchor(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"^#{1,6}\s+", "", heading).strip().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors_of(doc_text):
    anchors, seen = set(), {}
    in_fence = False
    for line in doc_text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence and re.match(r"#{1,6} ", line):
            a = github_anchor(line)
            n = seen.get(a, 0)
            seen[a] = n + 1
            anchors.add(a if n == 0 else f"{a}-{n}")
    return anchors


def check_links(docs_root, doc_path, anchors):
    """Problems with links into the reference under docs_root (README.md and docs/**.md)."""
    problems = []
    files = [docs_root / "README.md"] + sorted((docs_root / "docs").rglob("*.md"))
    for f in files:
        if not f.is_file():
            continue
        text = f.read_text()
        for m in re.finditer(r"\]\(([^)\s]*language\.md)?#([^)\s]+)\)", text):
            target, anchor = m.group(1), m.group(2)
            if target is None and f.resolve() != doc_path.resolve():
                continue  # a link to another heading of that same file
            if anchor not in anchors:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{f.relative_to(docs_root)}:{line}: no heading of {doc_path.name} has the anchor #{anchor}")
    tutorials = docs_root / "docs" / "tutorials"
    for f in sorted(tutorials.glob("*.md")) if tutorials.is_dir() else []:
        if f.name.startswith("simt_"):
            continue
        if "language.md#" not in f.read_text():
            problems.append(f"{f.relative_to(docs_root)}: a tile-kernel tutorial that links to no entry of {doc_path.name}")
    return problems


def normalise_span(span):
    s = span.strip()
    s = re.sub(r"^(ct|ctile)::", "", s)
    # drop template argument lists, innermost first
    prev = None
    while prev != s:
        prev = s
        s = re.sub(r"<[^<>]*>", "", s)
    m = re.match(r"[A-Za-z_][\w]*(::[A-Za-z_]\w*)*", s)
    if not m:
        return set()
    name = re.sub(r"::(ct|ctile)::", "::", m.group(0))
    return {name}


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--headers", type=pathlib.Path, default=root / "include/ctile/frontend")
    ap.add_argument("--doc", type=pathlib.Path, default=root / "docs/language.md")
    ap.add_argument("--docs-root", type=pathlib.Path, default=root,
                    help="where README.md and docs/ are whose links into the reference are checked")
    ap.add_argument("--list", action="store_true", help="print the public names and exit")
    a = ap.parse_args()

    headers = sorted(a.headers.glob("*.hpp"))
    if not headers:
        print(f"check_language_docs: no headers in {a.headers}", file=sys.stderr)
        return 2
    found = {}
    for name, path, line in public_names(headers):
        found.setdefault(name, (path, line))
    if a.list:
        for name in sorted(found):
            print(name)
        return 0
    if not a.doc.is_file():
        print(f"check_language_docs: {a.doc} does not exist", file=sys.stderr)
        return 2
    doc_text = a.doc.read_text()
    documented = documented_names(doc_text)
    missing = sorted(n for n in found if n not in documented)
    link_problems = check_links(a.docs_root, a.doc, anchors_of(doc_text))
    for p in link_problems:
        print(f"check_language_docs: {p}", file=sys.stderr)
    if missing:
        print(f"check_language_docs: {len(missing)} public DSL name(s) are not documented in {a.doc}:", file=sys.stderr)
        for n in missing:
            path, line = found[n]
            try:
                where = path.relative_to(root)
            except ValueError:
                where = path
            print(f"  {n}  ({where}:{line})", file=sys.stderr)
        print("Add an entry (a heading or a table row whose first cell names it in backticks, e.g. `Tile::full`), "
              "or mark a declaration that is public for technical reasons only with `// doc: internal`.",
              file=sys.stderr)
        return 1
    if link_problems:
        return 1
    print(f"check_language_docs: all {len(found)} public DSL names are documented in {a.doc.name}, "
          f"and every link into it resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
