"""One user-facing error base: every package's errors derive from it, and ``rcrn``
prints any of them on one line with exit code 2."""

from __future__ import annotations

import pytest

import benchmarks
import benchmarks.cli
import detectors.errors
import parsers
import parsers.base
import parsers.evaluate
import parsers.readers
from benchmarks.base import DataError
from benchmarks.gitm_mr.mlm import MLMUnavailable
from benchmarks.outputs import ForeignFilesError
from rcrn.cli import main
from rcrn.engine.config import ConfigError
from rcrn.engine.trainer import CheckpointError
from rcrn.errors import CommandError, RcrnError
from rcrn.interop import DGLUnavailableError
from rcrn.models.release import ReleaseCheckpointError
from rcrn.models.uniter import UniterWeightsError
from rcrn.programs import ProgramError
from rcrn.safe_pickle import UnsafePickleError
from rcrn.structures import StructureError

# each with the built-in type callers catch
ERRORS = [
    (CommandError, Exception), (ConfigError, ValueError), (CheckpointError, ValueError),
    (DataError, ValueError), (parsers.evaluate.DataError, ValueError),
    (benchmarks.RegistryError, ValueError), (benchmarks.ProposalSourceError, ValueError),
    (ForeignFilesError, FileExistsError), (MLMUnavailable, RuntimeError),
    (ProgramError, ValueError), (StructureError, ValueError),
    (ReleaseCheckpointError, ValueError), (UniterWeightsError, ValueError),
    (UnsafePickleError, ValueError), (DGLUnavailableError, ImportError),
    (parsers.base.ParseError, ValueError), (parsers.base.BackendUnavailable, RuntimeError),
    (parsers.UnknownParser, ValueError), (parsers.readers.ReaderError, ValueError),
    (detectors.errors.DetectorDataError, ValueError),
    (detectors.errors.ImageNotFoundError, KeyError),
    (detectors.errors.MissingDependencyError, ImportError),
]


@pytest.mark.parametrize("cls, builtin", ERRORS, ids=[c.__name__ for c, _ in ERRORS])
def test_every_user_error_has_the_one_base(cls, builtin):
    assert issubclass(cls, RcrnError) and issubclass(cls, builtin)


@pytest.mark.parametrize("cls", [StructureError, ProgramError, DataError, CommandError])
def test_rcrn_prints_any_user_error_on_one_line(cls, monkeypatch, capsys):
    def handler(args):
        raise cls("problem 'x': boxes hold NaN\n  (line 3 of x.json)")

    monkeypatch.setattr(benchmarks.cli, "list_command", handler)
    assert main(["benchmarks"]) == 2
    captured = capsys.readouterr()
    assert captured.err == ("rcrn benchmarks: error: problem 'x': boxes hold NaN (line 3 of "
                            "x.json)\n")


def test_a_programming_error_is_not_dressed_as_a_user_error(monkeypatch):
    def handler(args):
        raise KeyError("a bug")

    monkeypatch.setattr(benchmarks.cli, "list_command", handler)
    with pytest.raises(KeyError):
        main(["benchmarks"])
