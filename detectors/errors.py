"""Errors raised by the detectors package."""

from __future__ import annotations

from rcrn.errors import RcrnError

__all__ = ["DetectorDataError", "ImageNotFoundError", "MissingDependencyError"]


class DetectorDataError(RcrnError, ValueError):
    """A detector output, a feature store or an image is malformed.

    The message names the file and the row or record at fault; it is always one
    line (line breaks quoted from a file or a library are folded into spaces).
    """

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str) and ("\n" in args[0] or "\r" in args[0]):
            args = (" ".join(args[0].split()),) + args[1:]
        super().__init__(*args)


class ImageNotFoundError(DetectorDataError, KeyError):
    """An image id is absent from a proposal source.

    It is a :class:`KeyError` (so ``dict``-style code keeps working) and a
    :class:`DetectorDataError` (so one ``except`` catches every data problem).
    """

    def __init__(self, image_id: object, source: str) -> None:
        self.image_id = image_id
        self.source = source
        super().__init__(f"{source}: no image with id {image_id!r}")

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0])


class MissingDependencyError(RcrnError, ImportError):
    """An optional dependency that a reader or detector needs is not installed."""
