"""Dynamic graph structures behind one interface, and the array backend."""
from .backend import BackendError, get_backend
from .base import DynamicGraph
from .csr_types import CSR, CSRBatch
from .registry import available, create, register

__all__ = ["BackendError", "get_backend", "DynamicGraph", "CSR", "CSRBatch",
           "available", "create", "register"]
