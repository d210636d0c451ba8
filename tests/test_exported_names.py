"""The front door's names, pinned (httpx's tests/test_exported_members.py is the model): adding
or removing one is a decision, made here on purpose."""

from __future__ import annotations

import judgepool as jp

EXPORTED = [
    "Comparison",
    "Database",
    "Evaluation",
    "JudgeReport",
    "Pool",
    "doctor",
    "errors",
    "open",
    "templates",
]


def test_all_lists_exactly_the_front_door() -> None:
    assert sorted(jp.__all__) == EXPORTED


def test_every_exported_name_resolves_and_dir_shows_it() -> None:
    for name in EXPORTED:
        assert getattr(jp, name) is not None, name
    assert set(EXPORTED) <= set(dir(jp))
    assert "__version__" in dir(jp)


def test_each_exported_class_says_where_it_lives() -> None:
    for name in EXPORTED:
        value = getattr(jp, name)
        if isinstance(value, type):
            assert value.__module__.startswith("judgepool.api."), (name, value.__module__)
            assert value.__doc__, name


def test_the_error_tree_is_one_module_with_one_base() -> None:
    tree = [getattr(jp.errors, name) for name in jp.errors.__all__]
    classes = [c for c in tree if isinstance(c, type) and issubclass(c, Exception)]
    assert len(classes) >= 14
    assert all(issubclass(c, jp.errors.JudgepoolError) for c in classes)
    assert all(c.__module__ == "judgepool.errors" for c in classes)
