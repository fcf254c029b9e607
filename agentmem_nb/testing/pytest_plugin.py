"""The pytest plugin: files named ``*.memcases.yaml`` are collected as tests, one test per case (as nbval does for
notebooks), with the case's explanation as the failure.

Installed with the package (the ``pytest11`` entry point), so in a project that depends on agentmem_nb::

    pytest tests/                       # collects tests/**/*.memcases.yaml too
    pytest recall.memcases.yaml -k sister
    pytest --memcases-offline           # agent cases on the offline model, whatever is configured

A file that does not follow the format is a collection error that names the file, the case and the field. Each file's
memory is prepared once (see :class:`~agentmem_nb.evaluation.cases.CaseRunner`) and removed after its last case.
For Python tests, :mod:`agentmem_nb.testing.assertions` has ``assert_recalls`` and ``assert_not_recalled``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.casefile import Case, CaseFile, is_case_file, load_case_file

if TYPE_CHECKING:  # the runner (retrieval, numpy) is imported by the first case that runs, not by every pytest start
    from agentmem_nb.evaluation.cases import CaseResult, CaseRunner

__all__ = ["MemCasesFile", "MemCaseItem", "MemCaseFailed", "pytest_addoption", "pytest_configure",
           "pytest_collect_file"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--memcases-offline``."""
    group = parser.getgroup("agentmem_nb", "recall cases (*.memcases.yaml)")
    group.addoption("--memcases-offline", action="store_true", default=False,
                    help="run agent cases of *.memcases.yaml files on the offline model, whatever is configured")


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``memcase_agent`` marker (agent cases carry it: ``-m "not memcase_agent"`` skips them)."""
    config.addinivalue_line("markers", "memcase_agent: a recall case that runs a whole agent turn")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> MemCasesFile | None:
    """Collect ``*.memcases.yaml`` (``.yml``, ``.json``) files."""
    if is_case_file(file_path.name):
        return MemCasesFile.from_parent(parent, path=file_path)
    return None


class MemCaseFailed(AssertionError):
    """A recall case failed; ``result`` says why."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(f"recall case {result.name!r} failed: {'; '.join(result.reasons)}")
        self.result = result


class MemCasesFile(pytest.File):
    """One case file: its cases are the tests; its memory is prepared on the first case and removed after the last."""

    _runner: CaseRunner | None = None

    def collect(self) -> Iterator[MemCaseItem]:
        case_file = load_case_file(self.path)
        for case in case_file.cases:
            yield MemCaseItem.from_parent(self, name=case.name, case_file=case_file, case=case)

    def runner(self) -> CaseRunner:
        """The runner shared by this file's cases."""
        if self._runner is None:
            from agentmem_nb.evaluation.cases import CaseRunner

            self._runner = CaseRunner(offline=bool(self.config.getoption("memcases_offline", default=False)))
        return self._runner

    def teardown(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str | Any:
        if isinstance(excinfo.value, InvalidArgument):  # a malformed case file: the message says it all
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class MemCaseItem(pytest.Item):
    """One recall case as a test."""

    def __init__(self, *, case_file: CaseFile, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case_file = case_file
        self.case = case
        self.result: CaseResult | None = None
        if case.agent:
            self.add_marker("memcase_agent")

    def runtest(self) -> None:
        parent = self.parent
        assert isinstance(parent, MemCasesFile)
        self.result = parent.runner().run_case(self.case_file, self.case)
        self.user_properties.append(("retrieved", len(self.result.retrieved)))
        if not self.result.passed:
            raise MemCaseFailed(self.result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str | Any:
        if isinstance(excinfo.value, MemCaseFailed):
            result = excinfo.value.result
            return f"recall case {result.name!r} failed ({self.path.name})\n{result.explain()}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.case.line - 1 if self.case.line is not None else None
        return self.path, line, f"memcase {self.case.name}"
