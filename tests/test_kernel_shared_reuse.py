"""A block-wide helper that keeps partial results in ``__shared__`` memory and is called more than once by one
kernel must end with a barrier: otherwise a warp that runs ahead into the second call overwrites partials that
thread 0 is still reading from the first (the race that made ``pr_corr_apply``'s change of R wrong, now and
then, on a busy GPU: its block sums, then ``pr_live_sums``'s, through the same ``pr_block_add3`` arrays).

A static check of every project kernel source, so that it runs in CI without a GPU: each kernel's calls are
counted through the helpers it calls (``pr_live_sums`` calls ``pr_block_add3``)."""
import importlib
import re

import pytest

MODULES = ["vinestream.algorithms.bfs_kernels", "vinestream.algorithms.pagerank_kernels",
           "vinestream.algorithms.transpose_kernels", "vinestream.algorithms.triangle_kernels",
           "vinestream.structures.contiguous_kernels", "vinestream.structures.coo_kernels",
           "vinestream.structures.faimgraph_kernels", "vinestream.structures.gpma_kernels",
           "vinestream.structures.graphvine_kernels", "vinestream.structures.slabhash_kernels",
           "vinestream.stream.batching.resolve_kernels", "vinestream.stream.batching.vertex_map_kernels"]

HEAD = re.compile(r"(__device__|__global__)[^;{]*?\b(\w+)\s*\(([^()]|\([^()]*\))*\)\s*\{")
CALL = re.compile(r"\b(\w+)\s*\(")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def functions(source: str) -> dict:
    """name -> (kind, body) of every __device__ / __global__ function of a CUDA source (comments dropped)."""
    source = COMMENT.sub("", source)
    out = {}
    for m in HEAD.finditer(source):
        depth, j = 1, m.end()
        while depth and j < len(source):
            depth += {"{": 1, "}": -1}.get(source[j], 0)
            j += 1
        out[m.group(2)] = (m.group(1), source[m.end(): j - 1])
    return out


def calls(fns: dict, body: str, seen=()) -> list:
    """The helpers ``body`` calls, each as often as it is called, through the helpers it calls."""
    out = []
    for name in CALL.findall(body):
        if name in fns and fns[name][0] == "__device__" and name not in seen:
            out.append(name)
            out += calls(fns, fns[name][1], (*seen, name))
    return out


def shared_state_helpers(fns: dict) -> dict:
    """Helpers that declare __shared__ state and read it after a barrier -> whether they end with one."""
    out = {}
    for name, (kind, body) in fns.items():
        if kind == "__device__" and "__shared__" in body and "__syncthreads" in body:
            out[name] = body.rstrip().endswith("__syncthreads();")
    return out


@pytest.mark.parametrize("module", MODULES)
def test_shared_state_helpers_called_twice_end_with_a_barrier(module):
    source = importlib.import_module(module).SOURCE
    fns = functions(source)
    helpers = shared_state_helpers(fns)
    for name, (kind, body) in fns.items():
        if kind != "__global__":
            continue
        called = calls(fns, body)
        for helper, ends_with_barrier in helpers.items():
            if called.count(helper) > 1:
                assert ends_with_barrier, f"{module}: kernel {name} calls {helper} {called.count(helper)} times"


def test_the_check_finds_the_race_it_is_for():
    """The pattern of the bug: the check flags it."""
    source = """
    __device__ void add(double a, double* out) {
        __shared__ double part[32];
        part[threadIdx.x / 32] = a;
        __syncthreads();
        if (threadIdx.x == 0) atomicAdd(out, part[0] + part[1]);
    }
    __device__ void more(double* out) { add(1.0, out); }
    extern "C" __global__ void k(double* out) { add(2.0, out); more(out); }
    """
    fns = functions(source)
    assert shared_state_helpers(fns) == {"add": False}
    assert calls(fns, fns["k"][1]).count("add") == 2
