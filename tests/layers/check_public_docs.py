#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every public declaration in libpkg/include/libpkg/**/*.hpp has a `///` line.

The public headers say what each type and function does and what it throws,
one `///` comment directly above it, as LLVM's headers do. What counts as a
public declaration:

  - at namespace scope: class, struct and enum definitions, `using X = ...`
    type aliases, function declarations and definitions;
  - inside a class or struct, in a public section (a struct starts public, a
    class private): member functions and nested class/struct/enum/alias
    definitions.

Not counted: forward declarations, fields (they may be grouped under one
comment or none), enum values, private and protected sections, `friend`,
`static_assert`, destructors, `= default` / `= delete` members, anything in
`namespace detail`, and the bodies of inline functions.

Documented means: the line directly above the declaration (above its
`template <...>` line when it has one) is a `///` comment, or the declaration
directly above it (no blank line between) is a documented overload of the
same name.

The headers written before this check are held by a ratchet:
public_docs_baseline.txt lists, per header, how many declarations are still
undocumented. A header may not have more than its number (a header not
listed: none), and a header with fewer must have its number lowered in the
same change, so the list only shrinks until it is empty.

Usage: check_public_docs.py SOURCE_DIR [--baseline FILE] | --self-test
"""

import re
import sys
from pathlib import Path


def strip_code(text: str) -> list[str]:
    """The lines of `text` with comments and string/char literals blanked
    (same line count), so braces and parentheses can be counted."""
    out = []
    in_block = False
    for line in text.split("\n"):
        code = ""
        i = 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                else:
                    in_block = False
                    i = end + 2
                continue
            c = line[i]
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                in_block = True
                i += 2
                continue
            if c in "\"'":
                j = i + 1
                while j < len(line) and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                code += c + c
                i = j + 1
                continue
            code += c
            i += 1
        out.append(code)
    return out


def drop_template_args(s: str) -> str:
    """`std::function<void(int)> f` → `std::function f` (nested <> too);
    `operator<` and shifts are rare in declarations and left alone."""
    prev = None
    while prev != s:
        prev = s
        s = re.sub(r"<[^<>]*>", "", s)
    return s


ACCESS = re.compile(r"^\s*(public|private|protected)\s*:")
TYPE_DEF = re.compile(r"^(?:template\s*)?(?:class|struct|union|enum(?:\s+class|\s+struct)?)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+)")
ALIAS = re.compile(r"^(?:template\s*)?using\s+(\w+)\s*=")


def classify(stmt: str, ends_with_brace: bool):
    """(kind, name) of one statement's text (comments stripped, joined), or
    None when it is not counted."""
    s = " ".join(stmt.split())
    s_noargs = drop_template_args(s)
    if re.match(r"^(namespace|extern\b)", s):
        return ("namespace", None)
    if re.match(r"^(friend|static_assert|using namespace|typedef)\b", s_noargs):
        return None
    m = TYPE_DEF.match(s_noargs)
    if m:
        if not ends_with_brace:
            return None  # forward declaration
        return ("enum" if s_noargs.startswith("enum") else "type", m.group(1))
    m = ALIAS.match(s_noargs)
    if m:
        return ("alias", m.group(1))
    if s_noargs.startswith("using "):
        return None  # using-declaration
    paren = s_noargs.find("(")
    if paren < 0:
        return None  # a field or a variable
    head = s_noargs[:paren]
    if "=" in head.replace("operator=", "").replace("operator==", ""):
        return None  # a field with an initializer
    m = re.search(r"(~?\w+|operator\s*\S+?)\s*$", head)
    if not m:
        return None
    name = m.group(1)
    if name.startswith("~"):
        return None
    if re.search(r"=\s*(default|delete)\s*;?\s*$", s):
        return None
    if name in ("if", "for", "while", "switch", "return", "sizeof", "decltype", "alignas"):
        return None
    return ("function", name)


class Scope:
    def __init__(self, kind, access=None, name=None):
        self.kind = kind  # "namespace" | "class" | "body"
        self.access = access
        self.name = name


def check_text(text: str, path: str = "<text>") -> list[str]:
    """`path:line: message` for each undocumented public declaration."""
    raw = text.split("\n")
    code = strip_code(text)
    problems = []
    stack = [Scope("namespace")]
    stmt = ""
    stmt_line = None
    prev_decl = None  # (end_line, name, documented) of the last declaration
    pending_continuation = False
    inner = 0  # braces opened inside a statement's parentheses (lambdas)

    def checked_scope():
        top = stack[-1]
        if top.kind == "namespace":
            return top.name != "detail"
        return top.kind == "class" and top.access == "public"

    def documented_above(line_no):
        above = line_no - 1
        return above >= 0 and raw[above].strip().startswith("///")

    for n, line in enumerate(code):
        stripped = line.strip()
        if pending_continuation or (not stmt and stripped.startswith("#")):
            pending_continuation = line.rstrip().endswith("\\")
            continue
        if not stmt and stack[-1].kind == "class":
            m = ACCESS.match(line)
            if m:
                stack[-1].access = m.group(1)
                line = line[m.end():]
                stripped = line.strip()
        for c in line:
            if stack[-1].kind == "body":
                if c == "{":
                    stack.append(Scope("body"))
                elif c == "}":
                    stack.pop()
                    if stack[-1].kind != "body":
                        # a function body closed: the statement is done
                        stmt = ""
                        stmt_line = None
                continue
            if not stmt.strip() and not c.isspace():
                stmt_line = n
            if inner or (c == "{" and stmt.count("(") != stmt.count(")")):
                inner += {"{": 1, "}": -1}.get(c, 0)
                stmt += c
                continue
            if c == "}":
                stack.pop()
                stmt = ""
                stmt_line = None
                prev_decl = None
                continue
            if c == ";" and not stmt.strip():
                continue  # the `;` after a class body
            stmt += c
            if c in ";{":
                if stmt.count("(") != stmt.count(")"):
                    continue  # a `;` inside the parentheses (a lambda's)
                if c == "{" and re.search(r"=\s*\{$", " ".join(stmt.split())):
                    stack.append(Scope("body"))  # a brace initializer
                    continue
                kind = classify(stmt[:-1], c == "{")
                start = stmt_line if stmt_line is not None else n
                if kind and kind[0] != "namespace" and checked_scope():
                    documented = documented_above(start)
                    if (not documented and prev_decl and prev_decl[0] == start - 1 and
                            prev_decl[1] == kind[1] and prev_decl[2]):
                        documented = True  # an overload sharing the comment
                    if not documented:
                        what = {"type": "type", "enum": "enum", "alias": "type alias",
                                "function": "function"}[kind[0]]
                        problems.append(f"{path}:{start + 1}: public {what} '{kind[1]}' has no /// line above it")
                    prev_decl = (n, kind[1], documented)
                elif c == ";":
                    prev_decl = (n, None, False) if kind is None else prev_decl
                if c == "{":
                    if kind and kind[0] == "namespace":
                        name = re.match(r"namespace\s+([\w:]*)", " ".join(stmt.split()))
                        ns_name = name.group(1).split("::")[-1] if name else ""
                        stack.append(Scope("namespace", name=ns_name))
                    elif kind and kind[0] == "type":
                        default = "public" if re.match(r"^(template\s*)?(struct|union)", drop_template_args(" ".join(stmt.split()))) else "private"
                        stack.append(Scope("class", access=default, name=kind[1]))
                    else:
                        stack.append(Scope("body"))
                stmt = ""
                stmt_line = None
        if stack[-1].kind != "body" and stmt.strip() and not stmt.endswith("\n"):
            stmt += "\n"
    return problems


def self_test() -> int:
    sample = """\
#pragma once
namespace libpkg {
/// A thing.
struct Thing {
  int a = 0;          // fields need nothing
  std::function<void(int)> cb;
  /// Does it.
  void run();
  int size() const { return a; }
  Thing() = default;
  ~Thing();
 private:
  void hidden();
};
class Undocumented {
 public:
  /// Fine.
  static Undocumented open(const std::string& path,
                           int flags = 0);
  void bare(int x);
};
/// Overloads share the comment.
std::string to_json(const Thing& t);
std::string to_json(const Undocumented& u);
std::string orphan();
enum class Kind { a, b };
/// Documented alias.
using Fn = std::function<void()>;
using Bad = int;
class Forward;
/// A template.
template <typename T>
T twice(T v) {
  auto f = [&](int x) { return x; };
  return v + v;
}
namespace detail {
void internal();
}
}  // namespace libpkg
"""
    got = [p.split(": ", 1)[1] for p in check_text(sample)]
    want = [
        "public function 'size' has no /// line above it",
        "public type 'Undocumented' has no /// line above it",
        "public function 'bare' has no /// line above it",
        "public function 'orphan' has no /// line above it",
        "public enum 'Kind' has no /// line above it",
        "public type alias 'Bad' has no /// line above it",
    ]
    if got != want:
        print("self-test failed:\n  got  " + "\n       ".join(got) + "\n  want " + "\n       ".join(want))
        return 1
    print("self-test passed")
    return 0


def read_baseline(path: Path) -> dict[str, int]:
    counts = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            header, count = line.split()
            counts[header] = int(count)
    return counts


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    baseline = {}
    if len(argv) == 4 and argv[2] == "--baseline":
        baseline = read_baseline(Path(argv[3]))
    elif len(argv) != 2:
        print(__doc__)
        return 2
    root = Path(argv[1])
    include = root / "libpkg/include/libpkg"
    headers = sorted(include.rglob("*.hpp"))
    if not headers:
        print(f"error: {include}: no headers found")
        return 2
    problems = []
    for h in headers:
        try:
            problems += check_text(h.read_text(), str(h.relative_to(root)))
        except IndexError:
            problems.append(f"{h.relative_to(root)}: unbalanced braces (the checker could not read it)")
    per_header = {}
    for p in problems:
        header = p.split(":", 1)[0].removeprefix("libpkg/include/libpkg/")
        per_header.setdefault(header, []).append(p)
    failed = False
    for header in sorted(set(per_header) | set(baseline)):
        found = per_header.get(header, [])
        allowed = baseline.get(header, 0)
        if len(found) > allowed:
            failed = True
            print(f"error: {header}: {len(found)} undocumented public declaration(s), "
                  f"{allowed} allowed by the baseline:")
            for p in found:
                print("  " + p)
        elif len(found) < allowed:
            failed = True
            print(f"error: {header}: {len(found)} undocumented public declaration(s) left; "
                  f"lower its number in the baseline from {allowed} to {len(found)}")
    print(f"{len(headers)} headers, {len(problems)} undocumented public declaration(s) "
          f"({sum(baseline.values())} in the baseline)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
