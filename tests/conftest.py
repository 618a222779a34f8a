"""Suite-wide test settings.

Without a GPU, Triton kernels run in the interpreter (``TRITON_INTERPRET=1``). Triton reads the
variable when a kernel is decorated, so it is set here, before any test module (of any area) can
import a kernel module; setting it later in tests/kernels would leave kernels jitted for a GPU.

Tests run with one torch intra-op thread: their tensors are tiny, and on a shared 2-core machine
extra threads only add contention (measured here: up to 20x slower sampler and Sinkhorn tests with
two threads). Set ``SCIGEN_TEST_THREADS`` to change it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

try:  # tox envs of other distributions (e.g. datasets) do not install scigen-kernels
    from scigen.kernels._testing import enable_interpreter_if_no_cuda
except ImportError:
    pass
else:
    enable_interpreter_if_no_cuda()


@pytest.fixture(autouse=True, scope="session")
def _torch_threads():
    try:  # scigen-datasets' own env has no torch
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(int(os.environ.get("SCIGEN_TEST_THREADS", "1")))
    yield
    torch.set_num_threads(before)


@pytest.fixture
def float64_default():
    """Run a test with float64 as torch's default dtype (closed-form comparisons to 1e-10)."""
    import torch

    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def readme_example(package: str, heading: str) -> str:
    """The code of the first Python block after ``heading`` in ``packages/<package>/README.md``, or in
    ``<package>/README.md`` for the distributions at the top of the tree (``shared``, ``kernels``, ``datasets``)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    readme = root / "packages" / package / "README.md"
    text = (readme if readme.is_file() else root / package / "README.md").read_text()
    return re.search(r"```python\n(.*?)```", text[text.index(heading):], re.S).group(1)


@pytest.fixture(name="readme_example")
def readme_example_fixture():
    """:func:`readme_example` as a fixture (README tests: ``readme_example("timeseries", "## ...")``)."""
    return readme_example


#: training steps per ``fit`` (per stage) when an example runs "sized down" in the default suite
CAPPED_STEPS = 4


@pytest.fixture
def capped_training(monkeypatch):
    """Run code as written with every ``fit`` (each stage of a staged fit) capped at :data:`CAPPED_STEPS`
    optimiser steps: README and docstring examples run in the default suite this way, so an example whose
    calls no longer work is a failing test; the as-written runs (with their quality assertions) stay ``slow``."""
    from scigen.core.system.training import TrainingOptions

    original = TrainingOptions.fit_kwargs

    def capped(self, **overrides):
        kw = original(self, **overrides)
        kw["max_steps"] = min(int(kw["max_steps"]), CAPPED_STEPS)
        return kw

    monkeypatch.setattr(TrainingOptions, "fit_kwargs", capped)
    return CAPPED_STEPS


def run_under_a_terminal(argv: list[str], timeout: float = 600) -> tuple[int, str]:
    """Run ``argv`` with stdout and stderr on a pseudo-terminal (where ``progress=None`` draws bars);
    return ``(exit status, everything it printed)``."""
    import os
    import pty
    import subprocess

    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, close_fds=True,
                            env={**os.environ, "TERM": "xterm"})
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks).decode(errors="replace")


@pytest.fixture(name="run_under_a_terminal", scope="session")
def run_under_a_terminal_fixture():
    """:func:`run_under_a_terminal` as a fixture."""
    return run_under_a_terminal


def crash_after(steps: int):
    """A Lightning callback raising ``RuntimeError("simulated crash")`` once ``steps`` training steps have ended,
    counted over every ``fit`` it is passed to (so over every stage of a staged fit): an interrupted run."""
    from lightning.pytorch.callbacks import Callback

    class Crash(Callback):
        seen = 0

        def on_train_batch_end(self, *args):
            Crash.seen += 1
            if Crash.seen == steps:
                raise RuntimeError("simulated crash")

    return Crash()


@pytest.fixture(name="crash_after", scope="session")
def crash_after_fixture():
    """:func:`crash_after` as a fixture."""
    return crash_after


def run_script(script, *args, cwd, timeout: float = 150.0, env: dict | None = None, text: str | None = None):
    """Run ``python script *args`` in ``cwd`` (one torch thread) in its own process group, killed whole if it
    outlives ``timeout`` (a hung DDP rank must not hang the suite); the test fails with the output's tail when
    it exits non-zero. ``env`` adds variables; ``text``: written to ``script`` first. Returns the ``Popen``
    (already finished)."""
    import signal

    if text is not None:
        Path(script).write_text(text)
    import subprocess
    import sys

    full = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore", **(env or {})}
    proc = subprocess.Popen([sys.executable, str(script), *map(str, args)], cwd=cwd, env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{script} {' '.join(map(str, args))} did not finish within {timeout:.0f} s")
    assert proc.returncode == 0, out.decode()[-3000:]
    return proc


@pytest.fixture(name="run_script", scope="session")
def run_script_fixture():
    """:func:`run_script` as a fixture."""
    return run_script
