"""Per-step bookkeeping shared by all solvers: user callback, trajectory, progress bar.

The bar is drawn with ``rich`` (a dependency of scigen-core), falling back to ``tqdm`` and then to
nothing. ``progress=None`` turns it on only when standard error is a terminal.

Inside :func:`no_progress_bars` no sampler draws a bar whatever its ``progress`` says: the engine's
training loop runs every ``loss_fn`` call under it, so a loss that integrates the sampler each step
(Inverse Flow's IFM loss, AGDiff's joint loss) never draws bars into a ``fit`` (issue 32).
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Callable, Iterator

from torch import Tensor

__all__ = ["StepHook", "bars_silenced", "no_progress_bars", "progress_bar"]

_SILENCED: contextvars.ContextVar[bool] = contextvars.ContextVar("scigen_sampler_bars_silenced", default=False)


@contextlib.contextmanager
def no_progress_bars() -> Iterator[None]:
    """No sampler draws a progress bar inside this block (``progress=True`` included)."""
    token = _SILENCED.set(True)
    try:
        yield
    finally:
        _SILENCED.reset(token)


def bars_silenced() -> bool:
    """Whether the caller runs inside :func:`no_progress_bars`."""
    return _SILENCED.get()


def _tty() -> bool:
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


class _Bar:
    def __init__(self, total: int, description: str):
        self._rich = self._tqdm = None
        try:
            from rich.console import Console
            from rich.progress import Progress

            self._rich = Progress(console=Console(stderr=True), transient=True)
            self._rich.start()
            self._task = self._rich.add_task(description, total=total)
        except ImportError:  # pragma: no cover - rich is a dependency
            try:
                from tqdm.auto import tqdm

                self._tqdm = tqdm(total=total, desc=description, leave=False)
            except ImportError:
                pass

    def advance(self) -> None:
        if self._rich is not None:
            self._rich.advance(self._task)
        elif self._tqdm is not None:
            self._tqdm.update(1)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
        elif self._tqdm is not None:
            self._tqdm.close()


class _NoBar:
    def advance(self) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, description: str, progress: bool | None):
    """A bar with ``advance()`` / ``close()`` for any iterative loop of the engine or a system (sampler steps,
    closed-form EM iterations): ``progress=None`` draws it only when standard error is a terminal, and never
    inside :func:`no_progress_bars`; otherwise an object whose methods do nothing."""
    if bars_silenced() or not (_tty() if progress is None else progress):
        return _NoBar()
    return _Bar(total, description)


class StepHook:
    """Called by a solver once per step with the state at the start of the step.

    ``hook(i, t, x, x0_hat)``: ``i`` the step index, ``t`` the ``[B]`` time of the state ``x`` and
    ``x0_hat`` the (guided) denoiser output at ``(x, t)``. ``hook.finish(x)`` records the result.
    """

    def __init__(
        self,
        n_steps: int,
        callback: Callable | None = None,
        trajectory: bool = False,
        progress: bool | None = None,
        description: str = "sampling",
        project: Callable | None = None,
    ):
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable as callback(step, t, x, x0_hat), got {type(callback).__name__}")
        self.callback = callback
        self.project = project
        self.trajectory: list[Tensor] | None = [] if trajectory else None
        self._bar = progress_bar(n_steps, description, progress) if n_steps > 0 else None

    def __call__(self, i: int, t: Tensor, x: Tensor, x0_hat: Tensor) -> None:
        t = t.expand(x.shape[0])
        if self.project is not None:
            x = self.project(x)
        if self.trajectory is not None:
            self.trajectory.append(x.detach().clone())
        if self.callback is not None:
            self.callback(i, t, x, x0_hat)
        if self._bar is not None:
            self._bar.advance()

    def finish(self, x: Tensor) -> None:
        if self.trajectory is not None:
            self.trajectory.append(x.detach().clone())
        self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
