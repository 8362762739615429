#!/usr/bin/env python3
"""Self-test of scripts/check_language_docs.py: on a made-up header (fixtures/headers) it must find
exactly the public names, pass a reference that documents all of them, and fail, naming the name
and its file:line, on a reference that lacks one, or that mentions it only in prose; on a made-up
project (fixtures/root) it must fail on a link to a heading the reference lacks and on a
tile-kernel tutorial that links to no entry. Argument: a scratch directory."""
import shutil
import pathlib
import subprocess
import sys

here = pathlib.Path(__file__).resolve().parent
checker = here.parent.parent / "scripts" / "check_language_docs.py"
headers = here / "fixtures" / "headers"
fixture_root = here / "fixtures" / "root"
scratch = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp") / "check_language_docs_selftest"
shutil.rmtree(scratch, ignore_errors=True)
scratch.mkdir(parents=True)
no_links = scratch / "no_links"  # a project without README or docs/: cases 2-5 test the coverage alone
no_links.mkdir()
complete = (here / "fixtures" / "complete.md").read_text()
failures = []


def run(*args, root=fixture_root):
    return subprocess.run([sys.executable, str(checker), "--headers", str(headers), "--docs-root", str(root), *args],
                          capture_output=True, text=True)


def expect(cond, what, r=None):
    if not cond:
        failures.append(what + ("" if r is None else f"\n  exit {r.returncode}\n  stdout: {r.stdout}\n  stderr: {r.stderr}"))


def check_doc(name, text, root=fixture_root):
    p = scratch / f"{name}.md"
    p.write_text(text)
    return run("--doc", str(p), root=root)


def project_with(name, path, text):
    """A copy of the fixture project with one file replaced."""
    root = scratch / name
    shutil.copytree(fixture_root, root)
    (root / path).write_text(text)
    return root


# 1. Exactly the public names.
r = run("--list")
want = {"Widget", "Widget::element_type", "Widget::rank", "Widget::shown", "Options", "Options::size", "free_fn",
        "constrained", "made_by_macro", "defaults", "rounding::rn"}
got = set(r.stdout.split())
expect(r.returncode == 0 and got == want,
       f"--list: missing {sorted(want - got)}, unexpected {sorted(got - want)}", r)

# 2. A complete reference passes (alone, and with the fixture project's links into it).
r = check_doc("complete", complete, root=no_links)
expect(r.returncode == 0, "the complete reference must pass", r)
r = check_doc("complete", complete)
expect(r.returncode == 0, "the complete reference and the fixture project's links must pass", r)

# 3. One undocumented name fails, naming it and where it is declared.
r = check_doc("missing", complete.replace("`ct::free_fn(x)`, ", ""), root=no_links)
expect(r.returncode == 1, "a reference without free_fn must fail", r)
expect("free_fn  (" in r.stderr and "widget.hpp:" in r.stderr, "the failure must name free_fn and its file:line", r)
expect("constrained  (" not in r.stderr, "only the missing name is reported", r)

# 4. A member counts only as Class::member: `shown` alone does not document Widget::shown.
r = check_doc("unqualified", complete.replace("`Widget<T>::shown(s)`", "`shown(s)`"), root=no_links)
expect(r.returncode == 1 and "  Widget::shown  (" in r.stderr, "an unqualified member name must not count", r)

# 5. A name in prose or in a code block is not an entry.
r = check_doc("prose", complete.replace("`made_by_macro`", "") + "\nText about `made_by_macro`.\n\n```\nmade_by_macro\n```\n",
              root=no_links)
expect(r.returncode == 1 and "  made_by_macro  (" in r.stderr, "a mention in prose must not count as an entry", r)

# 6. A missing reference file is an error, not a pass.
r = run("--doc", str(here / "fixtures" / "no_such_file.md"))
expect(r.returncode == 2, "a missing reference must fail", r)

# 7. A link to a heading the reference does not have fails, naming the file and line.
root = project_with("bad_anchor", "docs/tutorials/uses_widget.md",
                    "# T\n\nUses [`Widget`](../language.md#ctwidget) and [free_fn](../language.md#no-such-entry).\n")
r = check_doc("complete_for_links", complete, root=root)
expect(r.returncode == 1 and "uses_widget.md:3: no heading of complete_for_links.md has the anchor #no-such-entry"
       in r.stderr, "a broken anchor must fail with file:line", r)

# 8. A tile-kernel tutorial without any link into the reference fails; a SIMT one need not link.
root = project_with("no_link", "docs/tutorials/uses_widget.md", "# T\n\nNo links here.\n")
r = check_doc("complete_no_link", complete, root=root)
expect(r.returncode == 1 and "uses_widget.md: a tile-kernel tutorial that links to no entry" in r.stderr
       and "simt_other" not in r.stderr, "a tutorial without links must fail (and only that one)", r)

if failures:
    print("check_language_docs self-test FAILED:\n" + "\n".join(failures), file=sys.stderr)
    sys.exit(1)
print("check_language_docs self-test: 9 cases behave as required")
