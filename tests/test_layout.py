"""The package layout: no private top-level module (the shared plumbing is in shell/), no
import of a former path, and the order of imports (no circle at import time)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import onlinelearn

SRC = Path(onlinelearn.__file__).resolve().parent

#: private top-level modules that moved into shell/ and io/; none is kept at its former path
FORMER = {
    "onlinelearn._config": "onlinelearn._core.config",
    "onlinelearn._validation": "onlinelearn.shell.validation",
    "onlinelearn._checks": "onlinelearn.shell.validation",
    "onlinelearn._snapshot": "onlinelearn.shell.snapshot",
    "onlinelearn._example_weights": "onlinelearn.shell.weights",
    "onlinelearn._estimator": "onlinelearn.shell.meta",
    "onlinelearn._atomic": "onlinelearn.shell.atomic",
    "onlinelearn._linear_state": "onlinelearn.shell.linear_state",
    "onlinelearn._linear_readout": "onlinelearn.shell.readout",
    "onlinelearn._svmlight_blocks": "onlinelearn.io._blocks",
}


def test_no_private_top_level_module_outside_the_shell():
    """The only top-level modules are public ones: private plumbing lives in shell/ (or in the
    package it serves), so a file's folder says what it serves."""
    private = sorted(
        p.name for p in SRC.glob("_*.py") if p.name not in ("__init__.py", "__main__.py")
    )
    assert not private, private
    for old, new in FORMER.items():
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
        importlib.import_module(new)


def test_the_checks_of_a_pass_are_reached_through_validation():
    from onlinelearn.shell import output_checks, validation

    for name in output_checks.__all__:
        assert getattr(validation, name) is getattr(output_checks, name)


def test_the_forms_the_core_reads_are_reached_through_validation():
    """The batch layout and the label codes moved to ``shell.encoding`` (validation.py had
    reached 500 lines); the estimators still import them from ``shell.validation``."""
    from onlinelearn.shell import encoding, validation

    for name in encoding.__all__:
        assert getattr(validation, name) is getattr(encoding, name)
        assert name in validation.__all__


def test_the_public_base_path_gives_the_base_class():
    """``onlinelearn.base`` is public (learners derive from its class): it re-exports the class
    of :mod:`onlinelearn.shell.base`, and nothing else."""
    import onlinelearn.base
    import onlinelearn.shell.base

    assert onlinelearn.base.__all__ == ["OnlineLinearClassifier"]
    assert onlinelearn.base.OnlineLinearClassifier is onlinelearn.shell.base.OnlineLinearClassifier
    assert issubclass(onlinelearn.Perceptron, onlinelearn.base.OnlineLinearClassifier)


def _import_statements(path: Path, at_import_only: bool = False):
    """``(M, [a, ...])`` for each ``from M import a, ...`` and ``(M, [])`` for ``import M`` of a
    source file, relative names resolved.  ``at_import_only``: only the statements of the module
    body, not the imports inside functions, which run when the function is called."""
    package = list(path.relative_to(SRC.parent).parts[:-1])  # also for an __init__.py
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body if at_import_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((a.name, []) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield mod, [a.name for a in node.names]


def _imported_modules(path: Path):
    """Every name a source file imports: M, and M.a for each ``from M import a``."""
    for mod, names in _import_statements(path):
        yield mod
        yield from (f"{mod}.{a}" for a in names)


def test_no_module_of_the_package_uses_a_former_path():
    users = [
        f"{path.relative_to(SRC)} imports {name}"
        for path in sorted(SRC.rglob("*.py"))
        for name in _imported_modules(path)
        if name in FORMER
    ]
    assert not users, users


def test_io_is_a_package_with_the_same_public_names():
    """``onlinelearn.io`` became a package (its block parser, line messages and reading thread
    are private modules in it); what it offers is unchanged."""
    import onlinelearn.io as io_mod

    assert Path(io_mod.__file__).name == "__init__.py"
    assert sorted(io_mod.__all__) == [
        "SvmlightChunkReader",
        "dump_svmlight",
        "iter_svmlight_chunks",
        "load_svmlight",
        "open_maybe_compressed",
        "svmlight_n_features",
    ]
    for name in io_mod.__all__:
        assert getattr(io_mod, name).__module__ == "onlinelearn.io"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_time_graph():
    """Module -> the package modules its body imports.  ``from P import m`` of a submodule m is
    an import of P.m (P is then already being imported); of any other name, of P itself."""
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        graph[name] = set()
        for mod, names in _import_statements(path, at_import_only=True):
            subs = {f"{mod}.{a}" for a in names} & modules.keys()
            if len(subs) < len(names) or not names:
                subs.add(mod)
            graph[name] |= subs & modules.keys()
        graph[name].discard(name)
    return graph


def test_no_import_circle_at_import_time():
    """No module needs, while it is being imported, a module that needs it back.  (A function
    may import an upper module when called: the kernel classes reach the Gram program that way,
    as the program dispatches on those classes.)"""
    graph = _import_time_graph()
    done, path = set(), []

    def visit(m):
        if m in path:
            raise AssertionError(" -> ".join(path[path.index(m) :] + [m]))
        if m in done:
            return
        path.append(m)
        for n in sorted(graph[m]):
            visit(n)
        path.pop()
        done.add(m)

    for m in sorted(graph):
        visit(m)


def test_kernel_modules_are_layered():
    """The kernel classes are at the bottom; the Gram program and the feature maps import them
    and the input check below them, not each other."""
    graph = _import_time_graph()
    k = "onlinelearn.kernels."
    assert not {m for m in graph[k + "_kernels"] if m.startswith(k)}
    assert not {m for m in graph[k + "_input"] if m.startswith(k)}
    assert k + "_program" not in graph[k + "_feature_map"]
    assert k + "_feature_map" not in graph[k + "_program"]


def test_no_module_is_longer_than_500_lines_and_none_calls_exec():
    """Modules a reader can hold (issue 31's shape): at most 500 lines each, and no code built
    from strings at run time."""
    long, execs = [], []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 500:
            long.append(f"{path.relative_to(SRC)}: {text.count(chr(10))} lines")
        tree = ast.parse(text)
        execs += [
            f"{path.relative_to(SRC)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("exec", "eval")
        ]
    assert not long, long
    assert not execs, execs


def test_every_import_of_the_package_names_something_that_exists():
    """Every ``from onlinelearn... import name`` in the package, the ones inside functions
    included (they run only when their branch does), names a module or an attribute that
    exists: a name moved to another module is caught here, not by the user whose call reaches
    the lazy import."""
    missing = []
    for path in sorted(SRC.rglob("*.py")):
        parts = ("onlinelearn",) + path.relative_to(SRC).with_suffix("").parts
        pkg = parts[:-1]  # a module's package; for __init__ the package itself
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                target = ".".join(base + ((node.module,) if node.module else ()))
            else:
                target = node.module or ""
            if not target.startswith("onlinelearn"):
                continue
            module = importlib.import_module(target)
            for alias in node.names:
                if alias.name == "*" or hasattr(module, alias.name):
                    continue
                try:
                    importlib.import_module(f"{target}.{alias.name}")
                except ImportError:
                    missing.append(f"{path.relative_to(SRC)}:{node.lineno}: {target}.{alias.name}")
    assert not missing, missing
