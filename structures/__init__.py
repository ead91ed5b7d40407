"""Dynamic graph structures behind one interface, and the array backend."""
from .backend import BackendError, get_backend
from .base import DynamicGraph
from .csr_types import CSR, CSRBatch
from .registry import available, create, register

__all__ = [
           "CSR",
           "BackendError",
           "CSRBatch",
           "DynamicGraph",
           "available",
           "create",
           "get_backend",
           "register",
]
