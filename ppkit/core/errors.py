"""One root for every error a user can fix.

:class:`PpkitError` is above every exception that means "the input, the setup or the
environment is wrong, and here is what to do": a missing file or extra, a changed source
document, an index built with another embedder, a bad option, a missing key. The ``ppkit``
command prints those as one line and exits with status 2; anything else is a bug and keeps
its traceback.

Each class also derives from the built-in exception it refines (``MissingFile`` is a
``FileNotFoundError``, ``InvalidInput`` a ``ValueError``...), so ``except ValueError``
written before this module existed still catches what it caught.
"""

from __future__ import annotations

__all__ = ["PpkitError", "InvalidInput", "ConfigError", "MissingFile", "MissingDependency", "NotFound"]


class PpkitError(Exception):
    """An error the user can fix; its message says what is wrong and what to do."""


class InvalidInput(PpkitError, ValueError):
    """An argument, option or input file that ppkit cannot use."""


class ConfigError(InvalidInput):
    """A setting (a Config field or a ``PPKIT_*`` variable) that is not valid."""


class MissingFile(PpkitError, FileNotFoundError):
    """A file or folder that should be there is not."""


class MissingDependency(PpkitError, ImportError):
    """An optional package is not installed; the message names the extra to install."""


class NotFound(PpkitError, KeyError):
    """A name (a document, a node id, a candidate) that is not there."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
