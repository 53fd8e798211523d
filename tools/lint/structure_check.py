#!/usr/bin/env python3
"""The shape of the hand-written code: sizes a newcomer can read, citations that lead somewhere,
and includes that follow the floors of docs/ARCHITECTURE.md.

    structure_check.py [--root DIR] [--todo FILE]

Checks, over the hand-written C++ (*.h, *.hpp, *.inl, *.c, *.cpp) under src/ and layer/
(generated code is written to the build folder and so is never seen here):

  file length      a file has at most 400 lines.
  function length  a function has at most 60 lines, counted from the first line of its
                   signature (after any `template <...>` line) to its closing brace. Functions
                   are found by a brace scan that skips comments, string and character
                   literals (raw strings too) and preprocessor lines; a `{` at namespace or
                   class scope whose signature ends in `)` (then qualifiers such as const,
                   noexcept, override, or a trailing return type), or that follows a
                   constructor's initializer list, opens a function. Lambdas and local classes
                   count as part of the function that holds them.
  citations        every Markdown file that a comment cites (a word ending in `.md`, with or
                   without folders before it) exists in the
                   repository. Comments of all C++ sources and of the Python files under
                   tools/ and tests/ are read. A citation resolves when the file exists
                   relative to, in this order: the citing file's folder, the repository's
                   root, docs/, src/, each floor's folder of src/ (its include root:
                   `capture/narrowing.md` from anywhere). Nothing else: a bare `narrowing.md`
                   cited from src/submit/submit/ does not find src/capture/capture/narrowing.md.
  floors           a C++ file in src/ lies in a floor of FLOORS (src/FLOOR/...), and each
                   `#include "folder/..."` of it names a folder of its own floor or of a floor
                   below (FLOORS: those it links, and theirs); src/ never includes layer/.
                   Includes without a folder (the generated headers) belong to the ground.
                   src/CMakeLists.txt declares the same floors over the same floors
                   (slipstream_floor(NAME ... BELOW ...)), so the build, where a header of a
                   floor above is not found, and this check agree.

Known offenders that other work is removing are listed in tools/lint/structure_todo.txt (its
header gives the format; a floor offence cannot be listed). A listed item passes while it is no larger than the size listed;
the check fails when it grows past that, and when it no longer offends, so the list only
shrinks. Exit status 0 when nothing fails.
"""
import argparse
import os
import re
import sys

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
CODE_DIRS = ("src", "layer")
CPP_SUFFIXES = (".h", ".hpp", ".inl", ".c", ".cpp")
CITING_DIRS = ("tools", "tests")  # read for citations only
SKIP_DIRS = {"build", ".git", "__pycache__"}
# The floors of src/, bottom to top (docs/ARCHITECTURE.md, section 1): each a folder of src/
# (its include root and CMake target slipstream_FLOOR), the folders of headers in it, and the
# floors it links. layer/ is above them all.
FLOORS = (
    ("ground", ("core",), ()),
    ("state", ("state",), ("ground",)),
    ("capture", ("capture",), ("state",)),
    ("idle", ("idle",), ("state",)),
    ("submit", ("submit",), ("capture", "idle")),
    ("waits", ("waits",), ("submit",)),
    ("objects", ("objects",), ("waits",)),
    ("memory", ("memory",), ("objects",)),
    ("engine", (), ("memory",)),
)
CITATION_ROOTS = ("", "docs", "src") + tuple(f"src/{floor}" for floor, _, _ in FLOORS)


# --- reading C++ ------------------------------------------------------------------------------

def split_cpp(text):
    """(code, comments): two copies of `text`, each the same length with newlines kept. `code`
    has comments, literal contents and preprocessor lines blanked; `comments` holds only the
    comments' text."""
    code, comments = [], []
    i, n = 0, len(text)
    line_start = True  # only whitespace since the last newline

    def blank(s):
        return re.sub(r"[^\n]", " ", s)

    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":
                if text.startswith("\\\n", j):
                    j += 2
                    continue
                if text.startswith("//", j):
                    break
                if text.startswith("/*", j):
                    end = text.find("*/", j + 2)
                    j = n if end < 0 else end + 2
                    continue
                j += 1
            code.append(blank(text[i:j]))
            comments.append(blank(text[i:j]))
            i = j
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            code.append(blank(text[i:j]))
            comments.append(text[i:j])
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            code.append(blank(text[i:j]))
            comments.append(text[i:j])
            i = j
            continue
        raw = re.match(r'(?:u8|[uUL])?R"([^()\\ ]{0,16})\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', i + raw.end())
            j = n if end < 0 else end + len(raw.group(1)) + 2
            code.append('""' + blank(text[i + 2:j]))
            comments.append(blank(text[i:j]))
            i = j
            continue
        if c == '"' or (c == "'" and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            code.append(c + blank(text[i + 1:j - 1]) + c)
            comments.append(blank(text[i:j]))
            i = j
            continue
        code.append(c)
        comments.append("\n" if c == "\n" else " ")
        if c == "\n":
            line_start = True
        elif not c.isspace():
            line_start = False
        i += 1
    return "".join(code), "".join(comments)


_QUALIFIERS = r"(?:\s|const\b|volatile\b|noexcept\b(?:\s*\([^()]*\))?|override\b|final\b|mutable\b|try\b|&&?)*"
_FUNCTION_END = re.compile(r"\)" + _QUALIFIERS + r"(?:->[^{};]*)?$")
_CTOR_INIT = re.compile(r"\)" + _QUALIFIERS + r":(?!:)")
_TEMPLATE_HEAD = re.compile(r"^\s*template\s*<")
_ACCESS = re.compile(r"^\s*(?:public|private|protected)\s*:(?!:)")
_NAME = re.compile(r"((?:~?[A-Za-z_]\w*\s*(?:<[^(){};]*>)?\s*::\s*)*"
                   r"(?:operator\s*(?:\(\s*\)|[^\s(]+)|~?[A-Za-z_]\w*))\s*\(")
_LAMBDA_NAME = re.compile(r"([A-Za-z_]\w*)\s*=\s*\[")
_ATTRIBUTES = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|\[\[[^\]]*\]\]|__declspec\s*\([^()]*\)")
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "decltype", "alignof",
             "static_assert", "alignas", "noexcept", "__attribute__"}


def _skip_template_head(header):
    """`header` without a leading `template <...>` clause (nested angle brackets allowed)."""
    while True:
        m = _TEMPLATE_HEAD.match(header)
        if not m:
            return header
        depth, i = 1, m.end()
        while i < len(header) and depth:
            depth += {"<": 1, ">": -1}.get(header[i], 0)
            i += 1
        header = header[i:]


def function_name(header):
    header = _ATTRIBUTES.sub(" ", header)
    if m := _LAMBDA_NAME.search(header):
        if "(" not in header[:m.start()]:
            return m.group(1)
    for m in _NAME.finditer(header):
        name = re.sub(r"\s+", "", m.group(1))
        if name.split("::")[-1] not in _KEYWORDS:
            return name
    return "<unnamed>"


class Function:
    def __init__(self, name, first_line, last_line):
        self.name, self.first_line, self.last_line = name, first_line, last_line

    @property
    def lines(self):
        return self.last_line - self.first_line + 1


def find_functions(code):
    """Every function defined at namespace or class scope of `code` (split_cpp's first copy),
    with the lines of its signature's start and its closing brace (1-based). Raises ValueError
    on unbalanced braces."""
    functions = []
    # Each open scope: [kind, where its current item's header starts]; kinds are "scope"
    # (file, namespace, class, extern "C"), "function", "data" and "init" (a member's braces in
    # an initializer list).
    stack = [["scope", 0]]
    opened = []  # (index of "{", name, first line) for each open function
    line_of = _line_index(code)
    for i, c in enumerate(code):
        if c not in "{};":
            continue
        kind, start = stack[-1]
        if c == ";":
            if kind == "scope":
                stack[-1][1] = i + 1
            continue
        if c == "{":
            if kind != "scope":
                stack.append([kind if kind != "init" else "data", i + 1])
                continue
            header = code[start:i]
            head = _ACCESS.sub("", _skip_template_head(header))
            stripped = head.strip()
            in_init_list = _CTOR_INIT.search(stripped) is not None
            if in_init_list and re.search(r"[\w>]$", stripped):
                stack.append(["init", i + 1])
                continue
            if _FUNCTION_END.search(stripped) or (in_init_list and stripped.endswith("}")):
                first = line_of(start + len(header) - len(head) + (len(head) - len(head.lstrip())))
                opened.append((len(stack), function_name(stripped), first))
                stack.append(["function", i + 1])
            elif re.search(r"=\s*$", stripped) or re.search(r"[)\]]\s*$", stripped):
                stack.append(["data", i + 1])
            else:
                stack.append(["scope", i + 1])
            continue
        # "}"
        if len(stack) == 1:
            raise ValueError(f"unbalanced '}}' on line {line_of(i)}")
        closed = stack.pop()
        if closed[0] == "function" and opened and opened[-1][0] == len(stack):
            _, name, first = opened.pop()
            functions.append(Function(name, first, line_of(i)))
        if stack[-1][0] == "scope" and closed[0] != "init":
            # What follows a closed body starts the next item; `};` is harmless.
            stack[-1][1] = i + 1
        elif stack[-1][0] == "init":
            pass
    if len(stack) != 1:
        raise ValueError(f"{len(stack) - 1} '{{' never closed")
    return functions


def _line_index(text):
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(offset):
        lo, hi = 0, len(starts)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid
        return lo + 1
    return line_of


# --- citations ------------------------------------------------------------------------------

_CITATION = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)\b")


def python_comments(text):
    """The `#` comments of Python source (outside string literals), newline for newline."""
    out = []
    for line in text.split("\n"):
        quote, i = None, 0
        while i < len(line):
            ch = line[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif line.startswith(quote, i):
                    i += len(quote) - 1
                    quote = None
            elif ch in "\"'":
                quote = line[i:i + 3] if line[i:i + 3] in ('"""', "'''") else ch
                i += len(quote) - 1
            elif ch == "#":
                out.append(line[i:])
                break
            i += 1
        else:
            out.append("")
    return "\n".join(out)


def citation_resolves(root, citing_path, cited):
    here = os.path.dirname(os.path.join(root, citing_path))
    candidates = [os.path.join(here, cited)] + [os.path.join(root, d, cited) for d in CITATION_ROOTS]
    return any(os.path.isfile(p) for p in candidates)


def broken_citations(root, rel, comments):
    """(line, cited) for each citation in `comments` (one file's) that resolves nowhere."""
    found = []
    for number, line in enumerate(comments.split("\n"), 1):
        for m in _CITATION.finditer(line):
            if not citation_resolves(root, rel, m.group(1)):
                found.append((number, m.group(1)))
    return found


# --- includes ---------------------------------------------------------------------------------

_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def floors_below(floors=FLOORS):
    """{floor: the floors it may include (itself, those it links, and theirs)}."""
    links = {name: below for name, _, below in floors}
    seen = {}

    def reach(name):
        if name not in seen:
            seen[name] = {name}.union(*(reach(b) for b in links[name]))
        return seen[name]
    return {name: reach(name) for name in links}


def floor_of(rel, floors=FLOORS):
    """The floor of src/ file `rel` (None outside src/ or in no known floor)."""
    parts = rel.split("/")
    if parts[0] != "src" or len(parts) < 3:
        return None
    return parts[1] if parts[1] in {name for name, _, _ in floors} else None


def floor_offences(rel, text, floors=FLOORS):
    """Messages for file `rel` of src/: outside every floor, or including above its floor."""
    if not rel.startswith("src/"):
        return []
    mine = floor_of(rel, floors)
    if mine is None:
        return [f"{rel}: in no floor of src/ (structure_check.py FLOORS)"]
    folder_floor = {folder: name for name, folders, _ in floors for folder in folders}
    allowed = floors_below(floors)[mine]
    out = []
    for m in _INCLUDE.finditer(text):
        top = m.group(1).split("/")[0] if "/" in m.group(1) else None
        if top == "layer":
            out.append(f"{rel}: includes {m.group(1)}: src/ never includes layer/")
        elif top in folder_floor and folder_floor[top] not in allowed:
            out.append(f"{rel}: includes {m.group(1)}, of floor {folder_floor[top]}, which floor "
                       f"{mine} does not link")
    return out


_CMAKE_FLOOR = re.compile(r"^\s*slipstream_floor\(\s*(\w+)([^)]*)\)", re.M)


def cmake_floor_offences(root, floors=FLOORS):
    """Where src/CMakeLists.txt (if any) declares floors other than `floors`, or over others."""
    path = os.path.join(root, "src", "CMakeLists.txt")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"#[^\n]*", "", f.read())
    declared = {}
    for m in _CMAKE_FLOOR.finditer(text):
        words = m.group(2).split()
        declared[m.group(1)] = tuple(words[words.index("BELOW") + 1:]) if "BELOW" in words else ()
    expected = {name: below for name, folders, below in floors if folders}
    out = []
    for name in sorted(set(expected) | set(declared)):
        if declared.get(name) != expected.get(name):
            out.append(f"src/CMakeLists.txt: floor {name} links {declared.get(name)}; "
                       f"structure_check.py FLOORS says {expected.get(name)}")
    return out


# --- the allow-list ---------------------------------------------------------------------------

def read_todo(path):
    """{key: allowed size}: key is "path" (file length), "path:function" (function length) or
    "path cites FILE" where FILE is a cited Markdown file (size 0)."""
    allowed = {}
    if not path or not os.path.exists(path):
        return allowed
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"(\S+ cites \S+\.md)|(\S+)\s+(\d+)", line)
            if not m:
                raise ValueError(f"{path}:{number}: not `path[:function] lines` or `path cites FILE` (a Markdown file)")
            if m.group(1):
                allowed[m.group(1)] = 0
            else:
                allowed[m.group(2)] = int(m.group(3))
    return allowed


# --- the walk ---------------------------------------------------------------------------------

def source_files(root, dirs, suffixes):
    for d in dirs:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames[:] = sorted(x for x in dirnames if x not in SKIP_DIRS)
            for name in sorted(filenames):
                if name.endswith(suffixes):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def offences(root):
    """({key: (size, message)} of what the allow-list may hold, [floor offences])."""
    found, floors = {}, cmake_floor_offences(root)
    code_files = set(source_files(root, CODE_DIRS, CPP_SUFFIXES))
    cpp_files = sorted(code_files | set(source_files(root, CITING_DIRS, CPP_SUFFIXES)))
    for rel in cpp_files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        code, comments = split_cpp(text)
        for line, cited in broken_citations(root, rel, comments):
            found[f"{rel} cites {cited}"] = (0, f"{rel}:{line}: cites {cited}, which is not in the repository")
        if rel not in code_files:
            continue
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_FILE_LINES:
            found[rel] = (lines, f"{rel}: {lines} lines (at most {MAX_FILE_LINES})")
        try:
            functions = find_functions(code)
        except ValueError as e:
            found[f"{rel}:<braces>"] = (0, f"{rel}: cannot scan: {e}")
            continue
        for fn in functions:
            if fn.lines > MAX_FUNCTION_LINES:
                key = f"{rel}:{fn.name}"
                if key in found:  # overloads: the larger counts
                    if found[key][0] >= fn.lines:
                        continue
                found[key] = (fn.lines, f"{rel}:{fn.first_line}: {fn.name} has {fn.lines} lines "
                                        f"(at most {MAX_FUNCTION_LINES})")
        floors += floor_offences(rel, text)
    for rel in source_files(root, CITING_DIRS, (".py",)):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            comments = python_comments(f.read())
        for line, cited in broken_citations(root, rel, comments):
            found[f"{rel} cites {cited}"] = (0, f"{rel}:{line}: cites {cited}, which is not in the repository")
    return found, floors


def check(root, todo_path):
    """(failures, notes): the lines to print; fails when failures is not empty."""
    found, floors = offences(root)
    allowed = read_todo(todo_path)
    failures, notes = list(floors), []
    for key, (size, message) in sorted(found.items()):
        if key not in allowed:
            failures.append(message)
        elif size > allowed[key]:
            failures.append(f"{message}; grew past the {allowed[key]} that structure_todo.txt allows")
        elif size < allowed[key]:
            notes.append(f"{key}: now {size}; structure_todo.txt may say so")
    for key in sorted(set(allowed) - set(found)):
        failures.append(f"{key}: listed in structure_todo.txt but no longer an offender: "
                        "take it off the list")
    return failures, notes


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--todo", default=os.path.join(here, "structure_todo.txt"))
    args = ap.parse_args(argv)
    failures, notes = check(args.root, args.todo)
    for line in notes:
        print(f"note: {line}")
    for line in failures:
        print(f"FAIL: {line}")
    print(f"{len(failures)} structure failure(s)" if failures else "structure check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
