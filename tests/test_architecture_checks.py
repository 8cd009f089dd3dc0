"""The architecture test's readers and rules on made-up source: each must reject what it
claims to (a check that passes on everything checks nothing)."""

from __future__ import annotations

import textwrap

import pytest

from tests._architecture import (
    REPO,
    Import,
    Module,
    UnknownModule,
    definition_in,
    dynamic_import_problem,
    dynamic_imports_in,
    export_problem,
    exported_in,
    face_imports_in,
    face_problems_in,
    imports_in,
    layer_problem,
    long_functions_in,
    module_of,
    private_names_in,
    private_problem,
    strongly_connected,
)
from tests._code_lists import MAX_LIST_IN_CODE, long_lists_in

KNOWN = {
    "loragate",
    "loragate.common",
    "loragate.common.errors",
    "loragate.results",
    "loragate.results.report",
    "loragate.runners",
    "loragate.runners._runner",
}


def _src(text: str) -> str:
    return textwrap.dedent(text)


def _module(name: str, layer: str, rel: str) -> Module:
    return Module(name, REPO / rel, layer)


# -- the import reader --------------------------------------------------------------


def test_the_reader_finds_imports_at_every_depth() -> None:
    source = _src(
        """
        from typing import TYPE_CHECKING
        import loragate.results.report
        import os
        if TYPE_CHECKING:
            from loragate.common.errors import BadInput
        def f():
            from loragate.results import report, Thing
            import importlib
            importlib.import_module("loragate.runners._runner")
        class C:
            def m(self):
                import loragate.common.errors as e
        """
    )
    found = {(i.target, i.names) for i in imports_in(source, KNOWN)}
    assert found == {
        ("loragate.results.report", ()),
        ("loragate.common.errors", ("BadInput",)),
        ("loragate.results", ("Thing",)),
        ("loragate.runners._runner", ()),
        ("loragate.common.errors", ()),
    }


def test_the_reader_resolves_a_name_to_its_longest_known_module() -> None:
    found = imports_in("import loragate.results.report.deeper.still\n", KNOWN)
    assert [i.target for i in found] == ["loragate.results.report"]
    assert imports_in("import os, json\nfrom pathlib import Path\n", KNOWN) == []


def test_the_reader_refuses_relative_imports() -> None:
    with pytest.raises(AssertionError, match="relative import"):
        imports_in("from .report import x\n", KNOWN)


# -- layers, privacy, exports, cycles ------------------------------------------------


def test_a_lower_layer_may_not_import_a_higher_one() -> None:
    score = _module("loragate.score.scoring", "score", "loragate/score/scoring.py")
    report = _module("loragate.results.report", "results", "loragate/results/report.py")
    assert layer_problem(score, report) == "score imports the later layer results"
    assert layer_problem(report, score) is None
    assert layer_problem(report, report) is None


def test_a_private_module_stays_in_its_folder() -> None:
    contract = _module("loragate.runners._runner", "runners", "runners/_runner.py")
    vllm = _module("loragate.runners.vllm", "runners", "runners/vllm.py")
    score = _module("loragate.score.scoring", "score", "loragate/score/scoring.py")
    assert private_problem(score, contract) == (
        "loragate.runners._runner is private to loragate.runners"
    )
    assert private_problem(vllm, contract) is None


def test_a_private_name_stays_in_its_module() -> None:
    source = _src(
        """
        import loragate.results.report as report
        import loragate.common.errors
        from loragate.results import report as r2
        from loragate.common.errors import BadInput, _hidden, __version__
        report._render(1)
        loragate.common.errors._problem
        r2._table
        report.public, report.__doc__
        other._private  # not a module of ours
        """
    )
    found = [name for _, name in private_names_in(source, KNOWN)]
    assert found == [
        "loragate.common.errors._hidden",
        "loragate.results.report._render",
        "loragate.common.errors._problem",
        "loragate.results.report._table",
    ]


def test_a_name_taken_from_a_package_must_be_in_its_all() -> None:
    cli = _module("loragate.cli.score", "cli", "loragate/cli/score.py")
    exported = {"loragate.runners": ("Runner", "get_backend")}
    ok = Import(1, "loragate.runners", ("get_backend",))
    hidden = Import(1, "loragate.runners", ("RankLimit",))
    assert export_problem(cli, ok, exported) is None
    assert export_problem(cli, hidden, exported) == "RankLimit not in loragate.runners.__all__"


def test_cycles_are_found_at_any_depth() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [{"a", "b", "c"}]
    assert strongly_connected({"a": {"b"}, "b": set(), "c": {"a"}}) == []
    assert strongly_connected({"a": {"a"}}) == []  # a module importing itself is no cycle


# -- unknown modules -----------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    ["loragate/helpers.py", "loragate/plugins/thing.py", "elsewhere/module.py"],
)
def test_a_module_no_layer_holds_is_refused(rel: str) -> None:
    with pytest.raises(UnknownModule):
        module_of(REPO / rel)


def test_known_places_get_their_layer() -> None:
    assert module_of(REPO / "loragate" / "evaluation.py").layer == "evaluation"
    assert module_of(REPO / "loragate" / "__init__.py").layer == "api"
    assert module_of(REPO / "runners" / "vllm.py").name == "loragate.runners.vllm"
    assert module_of(REPO / "loragate" / "score" / "__init__.py").name == "loragate.score"
    assert module_of(REPO / "tests" / "test_x.py").layer == "tests"


# -- package faces -------------------------------------------------------------------


def test_an_empty_or_missing_all_is_refused() -> None:
    assert list(face_problems_in("__all__: list[str] = []\n"))
    assert list(face_problems_in('"""A package."""\n'))


def test_a_face_lists_real_public_names_and_every_public_definition() -> None:
    good = _src(
        """
        from typing import TYPE_CHECKING
        from loragate.x.y import shown
        if TYPE_CHECKING:
            from loragate.x.z import lazy
        def helper_made_here(): ...
        _private = 1
        __all__ = ["helper_made_here", "lazy", "shown"]
        """
    )
    assert list(face_problems_in(good)) == []
    assert face_imports_in(good) == {
        "shown": ("loragate.x.y", "shown"),
        "lazy": ("loragate.x.z", "lazy"),
    }
    unlisted = good.replace('"helper_made_here", ', "")
    assert any("without listing" in p for p in face_problems_in(unlisted))
    ghost = good.replace('"shown"]', '"shown", "ghost"]')
    assert any("neither defines nor imports" in p for p in face_problems_in(ghost))
    private = good.replace('"shown"]', '"shown", "_private"]')
    assert any("private names" in p for p in face_problems_in(private))
    assert exported_in(good) == ("helper_made_here", "lazy", "shown")


def test_a_face_name_must_be_defined_where_it_is_imported_from() -> None:
    home = _src(
        '''
        import json as js
        def documented():
            """Says what."""
        class Bare: ...
        VALUE: int = 1
        '''
    )
    assert definition_in(home, "documented") is not None
    assert definition_in(home, "Bare") is not None
    assert definition_in(home, "VALUE") is not None
    assert definition_in(home, "js") is not None
    assert definition_in(home, "missing") is None


# -- sizes and word lists ------------------------------------------------------------


def test_a_long_function_is_found_by_its_body() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(81))
    long_one = f'def long(\n    a,\n    b,\n):\n    """Doc.\n\n    More doc.\n    """\n{body}\n'
    assert long_functions_in(long_one) == [("long", 1, 81)]
    short = "\n".join(f"    x{i} = {i}" for i in range(80))
    assert long_functions_in(f'def ok():\n    """Doc."""\n{short}\n') == []
    nested = f"class C:\n    def m(self):\n    {body.replace(chr(10), chr(10) + '    ')}\n"
    assert [name for name, _, _ in long_functions_in(nested)] == ["C.m"]


def _filled(source: str, n: int) -> str:
    """`source` with a list of `n` words in each of its shapes."""
    words = [f"w{i}" for i in range(n)]
    return source.format(
        words_list=repr(words),
        words_tuple=", ".join(map(repr, words)),
        words_set=", ".join(map(repr, words)),
        dict_keys=", ".join(f"{w!r}: {i}" for i, w in enumerate(words)),
        dict_values=", ".join(f"{i}: {w!r}" for i, w in enumerate(words)),
        spaced=" ".join(words),
        piped="|".join(words),
    )


@pytest.mark.parametrize(
    "source",
    [
        "WORDS = {words_list}\n",
        "WORDS = ({words_tuple})\n",
        "WORDS = {{{words_set}}}\n",
        "WORDS = {{{dict_keys}}}\n",
        "WORDS = {{{dict_values}}}\n",
        'WORDS = frozenset("{spaced}".split())\n',
        'WORDS = "{piped}".split("|")\n',
        'PATTERN = r"(?:{piped})"\n',
    ],
)
def test_a_word_list_in_code_is_found_in_every_shape(source: str) -> None:
    too_long = _filled(source, MAX_LIST_IN_CODE + 1)
    assert long_lists_in(too_long, "made_up.py"), too_long
    assert long_lists_in(_filled(source, MAX_LIST_IN_CODE), "made_up.py") == []


def test_a_modules_public_names_are_no_word_list() -> None:
    names = ", ".join(f'"name{i}"' for i in range(MAX_LIST_IN_CODE + 5))
    assert long_lists_in(f"__all__ = [{names}]\n", "made_up.py") == []
    assert long_lists_in(f"ALL = [{names}]\n", "made_up.py")


# -- imports by name, and by a computed name ----------------------------------------

PLANTED = {
    "import_module, a computed name": """
        import importlib
        def load(stage):
            return importlib.import_module("loragate." + stage + ".report")
    """,
    "import_module imported from importlib, an f-string": """
        from importlib import import_module
        def load(stage):
            return import_module(f"loragate.{stage}.report")
    """,
    "import_module, a constant name": """
        import importlib
        report = importlib.import_module("loragate.results.report")
    """,
    "__import__, a constant name": """
        report = __import__("loragate.results.report")
    """,
    "__import__, a computed name": """
        def load(name):
            return __import__(name)
    """,
    "sys.modules, a constant key": """
        import sys
        def report():
            return sys.modules["loragate.results.report"]
    """,
    "sys.modules, a computed key": """
        import sys
        STAGE = "results"
        report = sys.modules[f"loragate.{STAGE}.report"]
    """,
    "sys.modules.get, a computed key": """
        import sys
        def report(name):
            return sys.modules.get(name)
    """,
}


@pytest.mark.parametrize("source", PLANTED.values(), ids=list(PLANTED))
def test_an_upward_import_planted_in_a_module_fails_the_layer_check(source: str) -> None:
    """Each form, planted in a made-up module of the score layer that loads the later
    `loragate.results.report`, fails the very check every module is held to."""
    from tests.test_architecture import problems_of

    planted = _module("loragate.score.planted", "score", "loragate/score/planted.py")
    found = list(problems_of(planted, {}, _src(source)))
    assert found, source
    assert all(p.startswith("loragate/score/planted.py:") for p in found), found
    assert list(problems_of(planted, {}, "import loragate.common.errors\n")) == []


def test_a_constant_name_is_an_import_and_a_computed_one_is_refused() -> None:
    constant = imports_in(_src(PLANTED["sys.modules, a constant key"]), KNOWN)
    assert [i.target for i in constant] == ["loragate.results.report"]
    assert dynamic_imports_in(_src(PLANTED["sys.modules, a constant key"])) == []
    assert dynamic_imports_in(_src(PLANTED["sys.modules, a computed key"])) == [(4, "<module>")]
    assert dynamic_imports_in(_src(PLANTED["__import__, a computed name"])) == [(3, "load")]
    assert imports_in('import sys\nsys.modules["asyncio"]\n', KNOWN) == []  # not ours


def test_a_computed_name_is_allowed_only_in_the_function_named() -> None:
    allowed = {("loragate/common/faces.py", "lazy_face.__getattr__")}
    assert (
        dynamic_import_problem("loragate/common/faces.py", "lazy_face.__getattr__", allowed) is None
    )
    assert dynamic_import_problem("loragate/common/faces.py", "face_homes", allowed)
    assert dynamic_import_problem("loragate/score/x.py", "lazy_face.__getattr__", allowed)
