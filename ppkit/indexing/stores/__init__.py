"""Vector stores by name: the registry and its two entry points.

A store is one module here with one class implementing :class:`VectorStore` (most of it
inherited from :class:`StoreBase`), plus one line in :data:`REGISTRY`. The rest of ppkit names
no store: a build calls :func:`create` with the store's name, loading calls :func:`open` with
the ``"store"`` entry of the index manifest, and whatever differs between stores (files in the
index folder, connections, payload filters, cleanup after a rebuild) is asked of the store class.

* :func:`create` ``(name, dim, ...)``: a new, empty store for a build;
* :func:`open` ``(entry, folder, dim, connection=...)``: the store an index folder records.

Connection options (a server's ``url``, ``api_key``) come from the caller (``connection=``)
and, when opening, from the environment variables the store class declares
(``connection_env``, read by :func:`ppkit.core.config.store_connection_env`); never from an
index folder. A connection may hold options for other stores (the CLI passes ``--qdrant-url``
whatever the store): a store takes its own and ignores the others; an option no store knows
is an error.

This package does not embed, chunk or decide which store an index uses (the build does).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...core.config import store_connection_env
from ...core.errors import InvalidInput
from .base import StoreBase, VectorStore
from .faiss import FaissStore
from .qdrant import QdrantStore

__all__ = ["VectorStore", "StoreBase", "FaissStore", "QdrantStore", "REGISTRY", "DEFAULT", "names",
           "store_class", "create", "open", "own_files"]

# name -> store class; adding a store is its module plus one line here
REGISTRY: dict[str, type[StoreBase]] = {
    FaissStore.name: FaissStore,
    QdrantStore.name: QdrantStore,
}
DEFAULT = FaissStore.name  # the store of a new index, and of a manifest without a "store" entry


def names() -> list[str]:
    """The registered store names, in registration order."""
    return list(REGISTRY)


def store_class(name: str) -> type[StoreBase]:
    """The class registered as ``name``, or :class:`InvalidInput` naming the known stores."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise InvalidInput(f"unknown store {name!r}: use one of {', '.join(map(repr, REGISTRY))}") from None


def _own_connection(cls: type[StoreBase], connection: dict | None) -> dict:
    """The options of ``connection`` that ``cls`` takes (None values dropped); an option that no
    registered store takes is an error."""
    known = {opt for c in REGISTRY.values() for opt in c.connection_env.values()}
    unknown = sorted(set(connection or {}) - known)
    if unknown:
        raise InvalidInput(f"unknown connection option(s) {unknown}: the stores take {sorted(known)}")
    mine = set(cls.connection_env.values())
    return {k: v for k, v in (connection or {}).items() if k in mine and v is not None}


def create(name: str, dim: int, *, folder: Path | None = None, replaces: dict | None = None,
           connection: dict | None = None, **options) -> VectorStore:
    """A new, empty store ``name`` of ``dim``-dimensional vectors for a build.

    Args:
        folder: the index folder the build writes (a server store names its collection after it).
        replaces: the manifest's ``"store"`` entry of the index this build replaces in ``folder``.
        connection: connection options (the environment is not read here: a build reaches a server
            only when told, or by rebuilding an index opened on one, see the build).
        options: the store class's own creation options (e.g. ``client`` in tests).
    """
    cls = store_class(name)
    return cls.create(dim, folder=folder, replaces=replaces, **_own_connection(cls, connection), **options)


def open(entry: dict | None, folder: Path, dim: int, *, connection: dict | None = None) -> VectorStore:  # noqa: A001
    """The store an index folder records (``entry``: its manifest's ``"store"`` entry; None: the default
    store), for ``dim``-dimensional vectors; ``connection`` over the environment's defaults."""
    entry = entry if isinstance(entry, dict) else {"name": DEFAULT}
    cls = store_class(entry.get("name", DEFAULT))
    return cls.open(entry, Path(folder), dim, **{**store_connection_env(cls.connection_env),
                                                 **_own_connection(cls, connection)})


def own_files() -> re.Pattern:
    """The paths (relative, ``/``-separated) the registered stores write into an index folder."""
    return re.compile("|".join(f"(?:{c.files})" for c in REGISTRY.values() if c.files))
