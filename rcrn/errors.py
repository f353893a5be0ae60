"""The toolkit's user-facing errors.

Every error about what a user gave (a file, a line or record in it, a setting, a
missing optional package) derives from :class:`RcrnError`; the ``rcrn`` command prints
its message on one line, without a traceback, and exits with code 2.  Each package
keeps its own subclass (``DataError``, ``ConfigError``, ``CheckpointError``, ...), which
also derives from the built-in type a caller would catch (``ValueError``,
``ImportError``, ...).
"""

from __future__ import annotations

__all__ = ["RcrnError", "CommandError"]


class RcrnError(Exception):
    """A user-facing error: the message names the file, line, record or setting and
    says what was expected."""


class CommandError(RcrnError):
    """A command's own refusal (a flag that does not apply, an output folder in use)."""
