#!/usr/bin/env python3
"""tools/lint/structure_check.py on small made-up trees: each rule fails when it should and only
then, the brace scan is not fooled by braces in comments, strings or initializer lists, and
the allow-list fails when an item grows or stops offending, and an include up the floors
fails."""
import os
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "lint"))
import structure_check as sc  # noqa: E402


def body(lines):
    """A function body of `lines` lines in all, signature and closing brace included."""
    return "void f() {\n" + "    x();\n" * (lines - 2) + "}\n"



# Fictional citations, made at run time so that no file of the repository names a missing one.
gone, missing, nowhere, x = ("GONE" ".md", "MISSING" ".md", "NOWHERE" ".md", "X" ".md")


class Tree:
    """A repository root in a temporary folder."""

    def __init__(self, files, todo=""):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = self._tmp.name
        for rel, text in files.items():
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        self.todo = os.path.join(self.root, "todo.txt")
        with open(self.todo, "w") as f:
            f.write(textwrap.dedent(todo))

    def check(self):
        return sc.check(self.root, self.todo)

    def failures(self):
        return self.check()[0]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._tmp.cleanup()


def functions(text):
    return [(f.name, f.first_line, f.lines) for f in sc.find_functions(sc.split_cpp(text)[0])]


class FunctionScan(unittest.TestCase):
    def test_free_functions_and_members(self):
        text = textwrap.dedent("""\
            namespace a {
            struct S {
                int g() const { return 1; }
                S() : x(1), y{2} {
                    z();
                }
              private:
                int x, y{0};
            };
            template <typename T>
            auto h(T t) -> decltype(t) {
                return t;
            }
            }  // namespace a
            int S::k(int v) noexcept
            {
                return v;
            }
            """)
        self.assertEqual(functions(text), [("g", 3, 1), ("S", 4, 3), ("h", 11, 3), ("S::k", 15, 4)])

    def test_braces_in_comments_strings_and_literals_are_not_braces(self):
        text = textwrap.dedent("""\
            // void not_a_function() {
            /* { { { */
            #define OPEN {
            const char* s = "}{";
            const char c = '{';
            const char* r = R"x(})x";
            int table[] = {1, {2}, 3};
            void f() {
                if (s[0] == '}') { g("{"); }
                auto l = [](int v) { return v; };
            }
            """)
        self.assertEqual(functions(text), [("f", 8, 4)])

    def test_names_skip_attributes(self):
        text = ('extern "C" __attribute__((visibility("default"))) int VKAPI_CALL exported(int a) {\n'
                "    return a;\n}\n[[nodiscard]] bool checked() { return true; }\n")
        self.assertEqual(functions(text), [("exported", 1, 3), ("checked", 4, 1)])

    def test_length_counts_signature_to_closing_brace(self):
        self.assertEqual(functions(body(60)), [("f", 1, 60)])
        self.assertEqual(functions("static int\nsplit_signature(int a,\n    int b) {\n}\n"),
                         [("split_signature", 1, 4)])

    def test_unbalanced_braces_are_an_error(self):
        with self.assertRaises(ValueError):
            sc.find_functions(sc.split_cpp("void f() {\n")[0])
        with self.assertRaises(ValueError):
            sc.find_functions(sc.split_cpp("}\n")[0])


class Rules(unittest.TestCase):
    def test_a_clean_tree_passes(self):
        with Tree({"src/ground/core/a.cpp": body(60), f"docs/{x}": "",
                   "src/ground/core/b.h": f"// {x} rule 1\n"}) as t:
            self.assertEqual(t.failures(), [])

    def test_long_function_fails(self):
        with Tree({"layer/a.cpp": body(61)}) as t:
            self.assertEqual(len(t.failures()), 1)
            self.assertIn("layer/a.cpp:1: f has 61 lines", t.failures()[0])

    def test_long_file_fails(self):
        with Tree({"src/ground/core/a.h": "int x;\n" * 401, "src/ground/core/b.h": "int x;\n" * 400}) as t:
            self.assertEqual(t.failures(), ["src/ground/core/a.h: 401 lines (at most 400)"])

    def test_files_outside_src_and_layer_are_not_measured(self):
        with Tree({"tests/a.cpp": body(100), "build/generated/b.cpp": body(100)}) as t:
            self.assertEqual(t.failures(), [])

    def test_citations_resolve_beside_at_the_root_in_docs_or_a_floor(self):
        files = {"docs/FUSION.md": "", "README.md": "", "src/capture/capture/narrowing.md": "",
                 "src/capture/capture/a.cpp": "// FUSION.md rule 10, README.md, narrowing.md\n",
                 "src/submit/submit/b.cpp": "// capture/narrowing.md; src/capture/capture/narrowing.md\n",
                 "tools/c.py": f"# docs/FUSION.md\nx = '# {missing} in a string'\n"}
        with Tree(files) as t:
            self.assertEqual(t.failures(), [])

    def test_a_missing_citation_fails(self):
        files = {"src/capture/capture/narrowing.md": "",
                 "src/submit/submit/b.cpp": f'const char* s = "{gone}";\n/* see\n   narrowing.md */\n',
                 "tests/c.py": f"x = 1  # docs/{nowhere}\n"}
        with Tree(files) as t:
            self.assertEqual(t.failures(), [
                "src/submit/submit/b.cpp:3: cites narrowing.md, which is not in the repository",
                f"tests/c.py:1: cites docs/{nowhere}, which is not in the repository"])

    def test_includes_down_and_across_folders_of_lower_floors_pass(self):
        files = {"src/submit/submit/a.cpp": '#include "submit/a.h"\n#include "capture/c.h"\n'
                                            '#include "idle/i.h"\n#include "core/log.h"\n'
                                            '#include "command_table.h"\n',
                 "src/engine/e.cpp": '#include "memory/m.h"\n#include "state/object_state.h"\n',
                 "layer/l.cpp": '#include "memory/m.h"\n#include "hooks.h"\n'}
        with Tree(files) as t:
            self.assertEqual(t.failures(), [])

    def test_includes_up_or_across_fail(self):
        files = {"src/ground/core/a.h": '#include "state/object_state.h"\n#include "core/log.h"\n',
                 "src/capture/capture/b.h": '#include "idle/queue_idle.h"\n',
                 "src/memory/memory/c.cpp": '#include "layer/hooks.h"\n#include "objects/x.h"\n'}
        with Tree(files) as t:
            self.assertEqual(t.failures(), [
                "src/capture/capture/b.h: includes idle/queue_idle.h, of floor idle, which floor "
                "capture does not link",
                "src/ground/core/a.h: includes state/object_state.h, of floor state, which floor "
                "ground does not link",
                "src/memory/memory/c.cpp: includes layer/hooks.h: src/ never includes layer/"])

    def test_a_file_outside_the_floors_fails(self):
        with Tree({"src/core/a.cpp": "", "src/b.h": ""}) as t:
            self.assertEqual(t.failures(), ["src/b.h: in no floor of src/ (structure_check.py FLOORS)",
                                            "src/core/a.cpp: in no floor of src/ (structure_check.py FLOORS)"])

    def test_floor_offences_cannot_be_listed(self):
        with Tree({"src/ground/core/a.h": '#include "submit/fusion.h"\n'},
                  "src/ground/core/a.h 0\n") as t:
            self.assertEqual(len(t.failures()), 2)

    def test_cmake_floors_must_match(self):
        cmake = ("# slipstream_floor(x BELOW y)\n" + "".join(
            f"slipstream_floor({name}\n  {name}/{name}/a.cpp\n" + (f"  BELOW {' '.join(below)})\n" if below else ")\n")
            for name, folders, below in sc.FLOORS if folders))
        with Tree({"src/CMakeLists.txt": cmake}) as t:
            self.assertEqual(t.failures(), [])
        with Tree({"src/CMakeLists.txt": cmake.replace("BELOW capture idle)", "BELOW capture)")}) as t:
            self.assertEqual(t.failures(), ["src/CMakeLists.txt: floor submit links ('capture',); "
                                            "structure_check.py FLOORS says ('capture', 'idle')"])


class AllowList(unittest.TestCase):
    FILES = {"src/submit/submit/a.cpp": body(70), "src/waits/waits/b.h": f"// {gone}\n"}

    def test_listed_offenders_pass(self):
        with Tree(self.FILES, f"src/submit/submit/a.cpp:f 70  # being split\nsrc/waits/waits/b.h cites {gone}\n") as t:
            self.assertEqual(t.failures(), [])

    def test_a_listed_offender_may_not_grow(self):
        with Tree(self.FILES, f"src/submit/submit/a.cpp:f 69\nsrc/waits/waits/b.h cites {gone}\n") as t:
            self.assertEqual(len(t.failures()), 1)
            self.assertIn("grew past the 69", t.failures()[0])

    def test_a_listed_item_that_no_longer_offends_fails(self):
        with Tree(self.FILES, f"src/submit/submit/a.cpp:f 70\nsrc/waits/waits/b.h cites {gone}\n"
                              "src/ground/core/fixed.cpp 450\n") as t:
            self.assertEqual(t.failures(), ["src/ground/core/fixed.cpp: listed in structure_todo.txt but "
                                            "no longer an offender: take it off the list"])

    def test_a_malformed_line_is_an_error(self):
        with Tree({}, "src/a.cpp\n") as t:
            with self.assertRaises(ValueError):
                t.check()


if __name__ == "__main__":
    unittest.main()
