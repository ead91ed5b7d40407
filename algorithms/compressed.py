"""Fixed-Length (FL) bit-packed CSR and a BFS that walks it directly.

Section 2.1 of Kaczmarski, Przymus and Rzazewski, "Improving high-performance
GPU graph traversal with compression" (``papers/compressed-bfs.txt``): every
column id is stored in ``ell = ceil(log2 n)`` bits, packed back to back into
32-bit cells (``k = 32``).  Value ``i`` starts at bit ``i * ell``; it is read
by loading the cell that holds its first bit and the next one, shifting and
masking (a value spans two cells in a fraction ``(ell - gcd(32, ell)) / 32`` of
the cases, which is why a spare cell is kept at the end).  Random access stays
O(1) and branch-free, which is what BFS needs: a frontier expansion reads the
columns of arbitrary rows.

Packing is itself an array program without atomics: each 32-bit cell receives
bits from at most ``ceil(32 / ell) + 1`` values, so the cells are built by a
short loop over that small constant, each step gathering one value per cell,
shifting it into place and OR-ing it in.

The row offsets stay plain int64 (the paper compresses them too; they are
``1 / average degree`` of the data).  BFS reuses :func:`algorithms.bfs.relax_levels`
with a column accessor that decodes positions, so plain and compressed runs
execute the same frontier code and are compared like for like.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vinestream.structures.backend import array_module
from vinestream.structures.csr_types import CSR, VERTEX_DTYPE

from .bfs import bfs_arrays, csr_expander

CELL_BITS = 32
MASK32 = np.uint64(0xFFFFFFFF)


def bits_for(num_values: int) -> int:
    """``ceil(log2 n)`` bits, at least 1: enough for ids ``0 .. n-1``."""
    return max(1, int(num_values - 1).bit_length())


@dataclass(frozen=True)
class FixedLengthCSR:
    """A CSR whose column array is bit-packed at ``bits`` bits per id into uint32 ``cells``."""
    offsets: object        # int64, rows + 1
    cells: object          # uint32, ceil(E * bits / 32) + 1 (one spare cell: two-cell reads never overrun)
    bits: int
    num_edges: int

    @classmethod
    def from_csr(cls, xp, csr: CSR, num_vertices: int | None = None) -> FixedLengthCSR:
        n = int(num_vertices) if num_vertices is not None else max(csr.num_rows, 1)
        ell = bits_for(n)
        m = csr.num_edges
        cols = csr.cols.astype(np.uint64)
        num_cells = (m * ell + CELL_BITS - 1) // CELL_BITS + 1
        cells = xp.zeros(num_cells, dtype=np.uint64)
        if m:
            cell = xp.arange(num_cells, dtype=np.int64)
            first = (cell * CELL_BITS) // ell                  # first value whose bits reach this cell
            per_cell = (CELL_BITS + ell - 1) // ell + 1        # values that can touch one cell
            for k in range(per_cell):
                i = first + k
                valid = i < m
                ic = xp.where(valid, i, 0)
                v = xp.where(valid, cols[ic], np.uint64(0))
                shift = ic * ell - cell * CELL_BITS             # where the value starts relative to the cell
                left = xp.where(shift >= 0, v << xp.clip(shift, 0, 63).astype(np.uint64), np.uint64(0))
                right = xp.where(shift < 0, v >> xp.clip(-shift, 0, 63).astype(np.uint64), np.uint64(0))
                inside = valid & (shift < CELL_BITS) & (shift > -ell)
                cells |= xp.where(inside, (left | right) & MASK32, np.uint64(0))
        return cls(offsets=csr.offsets, cells=cells.astype(np.uint32), bits=ell, num_edges=m)

    @property
    def num_rows(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def column_at(self, positions):
        """Decode the column ids at ``positions`` (int64): two cell loads, a shift and a mask each."""
        bit = positions.astype(np.int64) * self.bits
        c = bit >> 5
        lo = self.cells[c].astype(np.uint64)
        hi = self.cells[c + 1].astype(np.uint64)
        word = (hi << np.uint64(32)) | lo
        val = (word >> (bit & 31).astype(np.uint64)) & np.uint64((1 << self.bits) - 1)
        return val.astype(VERTEX_DTYPE)

    def decode(self):
        """The full plain column array."""
        xp = array_module(self.cells)
        return self.column_at(xp.arange(self.num_edges, dtype=np.int64))

    def to_csr(self) -> CSR:
        return CSR(offsets=self.offsets, cols=self.decode(), weights=None)

    def nbytes(self) -> int:
        return int(self.offsets.nbytes + self.cells.nbytes)

    def column_bytes(self) -> int:
        return int(self.cells.nbytes)


def bfs_compressed(xp, fl: FixedLengthCSR, sources, capacity: int | None = None):
    """BFS straight on the packed columns: (dist, parent, levels, edges scanned)."""
    cap = int(capacity) if capacity is not None else fl.num_rows
    expand = csr_expander(xp, fl, column_at=fl.column_at)
    return bfs_arrays(xp, cap, sources, expand)


def compression_report(xp, csr: CSR, num_vertices: int | None = None) -> dict:
    """Bytes of the plain and the FL-packed CSR (offsets included in both)."""
    fl = FixedLengthCSR.from_csr(xp, csr, num_vertices)
    plain_cols = int(csr.cols.nbytes)
    return {"bits": fl.bits, "edges": fl.num_edges, "plain_bytes": int(csr.offsets.nbytes) + plain_cols,
            "compressed_bytes": fl.nbytes(), "plain_column_bytes": plain_cols,
            "compressed_column_bytes": fl.column_bytes(),
            "column_ratio": (fl.column_bytes() / plain_cols) if plain_cols else 1.0}
