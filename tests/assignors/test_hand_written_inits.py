"""Dataclasses with a hand-written `__init__` (init=False, so mypyc compiles it) set exactly
their fields: each once, nothing else, and take the init fields as parameters in order."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
from pathlib import Path

import pytest

import assignors

ROOT = Path(assignors.__file__).resolve().parent


def modules() -> list[str]:
    found = pkgutil.walk_packages(assignors.__path__, "assignors.")
    return sorted(["assignors", *(m.name for m in found)])


def source_of(module: str) -> Path:
    """The .py file of a module (its compiled extension, if any, sits next to it)."""
    parts = module.split(".")[1:]
    path = ROOT.joinpath(*parts)
    return path / "__init__.py" if (path / "__init__.py").exists() else path.with_suffix(".py")


def hand_written() -> list[tuple[str, type]]:
    out = []
    for name in modules():
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and obj.__module__ == name
                and dataclasses.is_dataclass(obj)
                and not obj.__dataclass_params__.init  # type: ignore[attr-defined]
            ):
                out.append((name, obj))
    return out


CLASSES = hand_written()


def init_of(module: str, cls: type) -> ast.FunctionDef:
    tree = ast.parse(source_of(module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    return item
    raise AssertionError(f"{cls.__qualname__}: init=False without an __init__ in {module}")


def attributes_set(init: ast.FunctionDef) -> list[str]:
    """Names set on self: `self.x = ...` (annotated too), `object.__setattr__(self, "x", ...)`."""
    me = init.args.args[0].arg
    names: list[str] = []
    for node in ast.walk(init):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for t in ast.walk(target):
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == me
                ):
                    names.append(t.attr)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__setattr__"
            and len(node.args) == 3
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == me
        ):
            key = node.args[1]
            assert isinstance(key, ast.Constant), f"line {node.lineno}: a computed field name"
            names.append(key.value)
    return names


def test_the_walk_finds_the_hand_written_inits() -> None:
    found = {cls.__qualname__ for _, cls in CLASSES}
    assert {"TopicMetadata", "Member", "GroupSpec", "Problem"} <= found
    assert len(CLASSES) >= 20


@pytest.mark.parametrize(("module", "cls"), CLASSES, ids=[c.__qualname__ for _, c in CLASSES])
def test_hand_written_init_sets_exactly_the_fields(module: str, cls: type) -> None:
    init = init_of(module, cls)
    fields = dataclasses.fields(cls)
    params = [a.arg for a in init.args.args[1:] + init.args.kwonlyargs]
    assert params == [f.name for f in fields if f.init], "parameters are the init fields in order"
    assert init.args.vararg is None
    assert init.args.kwarg is None
    set_ = attributes_set(init)
    assert sorted(set_) == sorted(f.name for f in fields), "every field set exactly once"


def test_the_check_sees_a_missing_and_an_extra_field() -> None:
    init = ast.parse(
        "def __init__(self, a, b):\n"
        "    object.__setattr__(self, 'a', a)\n"
        "    self.c = b\n"
        "    if a:\n"
        "        self.a = 1\n"
    ).body[0]
    assert isinstance(init, ast.FunctionDef)
    assert attributes_set(init) == ["c", "a", "a"]
