"""The public surface is exactly what each package's ``__all__`` says (httpx's habit): a name added without being
exported, or exported without existing, fails here; and every error and warning belongs to the one tree."""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

import agentmem_nb
from agentmem_nb import errors

PACKAGES = ["agentmem_nb", "agentmem_nb.store", "agentmem_nb.agent", "agentmem_nb.frames", "agentmem_nb.retrieval",
            "agentmem_nb.widgets"]
MODULES = sorted(info.name for info in pkgutil.walk_packages(agentmem_nb.__path__, "agentmem_nb.")
                 if not info.name.endswith("__main__"))


def _public(module: types.ModuleType) -> set[str]:
    return {name for name, value in vars(module).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType) and name != "annotations"}


@pytest.mark.parametrize("name", PACKAGES)
def test_a_package_exports_exactly_its_public_names(name: str) -> None:
    module = importlib.import_module(name)
    assert sorted(module.__all__) == sorted(_public(module))
    assert len(module.__all__) == len(set(module.__all__)), "a name listed twice"


@pytest.mark.parametrize("name", MODULES)
def test_every_name_a_module_exports_exists(name: str) -> None:
    module = importlib.import_module(name)
    missing = [exported for exported in getattr(module, "__all__", []) if not hasattr(module, exported)]
    assert missing == []


def test_every_error_and_warning_is_in_the_tree() -> None:
    for name in errors.__all__:
        value = getattr(errors, name)
        assert issubclass(value, (errors.AgentMemError, errors.AgentMemWarning)), name
        assert getattr(agentmem_nb, name) is value, f"{name} is not exported by the package"


def test_the_check_would_notice_an_unexported_name() -> None:
    module = types.ModuleType("probe")
    module.__all__ = ["kept"]  # type: ignore[attr-defined]
    module.kept = 1  # type: ignore[attr-defined]
    module.forgotten = 2  # type: ignore[attr-defined]
    assert sorted(_public(module)) != sorted(module.__all__)  # type: ignore[attr-defined]
