"""Structures by name: ``--structure NAME`` resolves here.

A structure module registers its class with ``@register``; the modules are
imported lazily by name so that adding a structure is one entry in
``_MODULES`` and one decorator.
"""
from __future__ import annotations

import importlib

import numpy as np

from .base import DynamicGraph
from .csr_types import CSRBatch

_REGISTRY: dict[str, type[DynamicGraph]] = {}

# name -> module that defines it (imported on first use)
_MODULES = {
    "csr": "vinestream.structures.csr",
    "coo": "vinestream.structures.coo",
    "graphvine": "vinestream.structures.graphvine",
    "slabhash": "vinestream.structures.slabhash",
    "hornet": "vinestream.structures.hornet",
    "custinger": "vinestream.structures.custinger",
    "faimgraph": "vinestream.structures.faimgraph",
    "aimgraph": "vinestream.structures.aimgraph",
    "ourograph": "vinestream.structures.ourograph",
    "gpma": "vinestream.structures.gpma",
    "diffcsr": "vinestream.structures.diffcsr",
}


def register(cls: type[DynamicGraph]) -> type[DynamicGraph]:
    """Class decorator: make ``cls`` available as ``--structure cls.name``."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no registry name")
    _REGISTRY[cls.name] = cls
    return cls


def available() -> list[str]:
    """Names of the structures that import on this installation."""
    names = []
    for name in _MODULES:
        try:
            get(name)
        except (ImportError, KeyError):
            continue
        names.append(name)
    return names


def get(name: str) -> type[DynamicGraph]:
    if name not in _REGISTRY:
        module = _MODULES.get(name)
        if module is None:
            raise KeyError(f"unknown structure {name!r}; known: {', '.join(sorted(_MODULES))}")
        importlib.import_module(module)
    return _REGISTRY[name]


def create(name: str, xp=np, /, **options) -> DynamicGraph:
    """A new, empty structure ``name`` on backend ``xp``.

    ``options`` are the structure's declared options (its class's ``options_spec``); an unknown
    one or a wrong value is a ValueError naming it.  (``name`` and ``xp`` are positional only, so
    that an option so named is refused as unknown rather than clashing with them.)"""
    cls = get(name)
    cls.check_options(options)        # first: an option named xp would otherwise clash with the argument
    return cls(xp, **options)


def build(name: str, xp, src, dst, num_vertices: int, weights=None, **options) -> DynamicGraph:
    """Structure ``name`` bulk-loaded with vertices ``0 .. num_vertices-1`` and the given edges."""
    graph = create(name, xp, **options)
    graph.insert_vertices(xp.arange(int(num_vertices), dtype=np.int32))
    graph.insert_edges(CSRBatch.from_edges(xp, src, dst, weights))
    return graph

