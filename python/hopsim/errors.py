"""The one error type that the CLI turns into exit code 2."""

from __future__ import annotations

from typing import Any, Callable


class ScenarioError(ValueError):
    """Bad input: a scenario, sweep or HPCC config that cannot be used as written.

    ``problems`` holds one line per problem, each starting with the field it is about
    (``topology.rate: ...``), so a user can find it in the file.
    """

    def __init__(self, problems: list[str] | str, source: str | None = None):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        self.source = source
        head = f"{source}: " if source else ""
        if len(self.problems) == 1:
            msg = head + self.problems[0]
        else:
            msg = head + f"{len(self.problems)} problems:\n" + "\n".join("  " + p for p in self.problems)
        super().__init__(msg)


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C or SIGTERM (the core polls for signals while it runs).

    ``partial`` holds what the run had measured when it stopped: the core's raw output from
    `run.execute`, `Results` from `run.run`, and None once the exception has crossed a process
    boundary (a sweep's workers: the caller only needs to know that they stopped).
    """

    def __init__(self, message: str, partial: object = None):
        super().__init__(message)
        self.message = message
        self._partial = partial
        self._convert: Callable[[Any], object] | None = None

    def convert_with(self, convert: Callable[[Any], object]) -> None:
        """Turn ``partial`` into `Results` with `convert` when it is first read. Why lazily: a
        caller that only reports the interruption (``hopsim run`` without ``--keep-partial``)
        must exit at once, not after converting and spooling what was measured."""
        self._convert = convert

    @property
    def partial(self) -> object:
        if self._convert is not None:
            convert, self._convert = self._convert, None
            self._partial = convert(self._partial)
        return self._partial

    @partial.setter
    def partial(self, value: object) -> None:
        self._partial, self._convert = value, None

    def __reduce__(self):  # pickled back from a worker process: the message only
        return (RunInterrupted, (self.message,))
