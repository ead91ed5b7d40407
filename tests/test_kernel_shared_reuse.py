"""A block-wide helper (one with ``__syncthreads``) that still touches its shared state after its last barrier
must not be called twice by one kernel: a warp that runs ahead into the second call overwrites what a thread is
still reading from the first.  That race made ``pr_corr_apply``'s change of R wrong, now and then, on a busy GPU:
its block sums, then ``pr_live_sums``', through the same ``pr_block_add3`` partials, read by thread 0 after the
helper's only barrier (session 18; the helper now ends with a barrier).

A static check of every project kernel source, so that it runs in CI without a GPU:

* a helper's shared state is what it declares ``__shared__`` and its pointer parameters (a caller's shared
  array, such as the block scans' ``sh``), and it is *unsafe to repeat* where a name of it appears after the
  helper's last ``__syncthreads()``;
* a kernel's calls are counted through the helpers and the macros it calls (``PR_GRID_LOOP``, the resolve's
  ``RS_RESOLVE_BODY``), kernels defined inside macros included, and a call inside a loop (``for``, ``while`` or
  a ``*LOOP`` macro) counts as repeated."""
import importlib
import re

import pytest

MODULES = ["vinestream.algorithms.bfs_kernels", "vinestream.algorithms.pagerank_kernels",
           "vinestream.algorithms.transpose_kernels", "vinestream.algorithms.triangle_kernels",
           "vinestream.structures.contiguous_kernels", "vinestream.structures.coo_kernels",
           "vinestream.structures.faimgraph_kernels", "vinestream.structures.gpma_kernels",
           "vinestream.structures.graphvine_kernels", "vinestream.structures.slabhash_kernels",
           "vinestream.stream.batching.resolve_kernels", "vinestream.stream.batching.vertex_map_kernels"]

HEAD = re.compile(r"(__device__|__global__)[^;{}]*?\b(\w+)\s*\(((?:[^()]|\([^()]*\))*)\)\s*\{")
DEFINE = re.compile(r"^[ \t]*#define[ \t]+(\w+)(\([^)]*\))?[ \t]*(.*)$", re.M)
CALL = re.compile(r"\b(\w+)\s*\(")
LOOP = re.compile(r"\b(for|while|\w*LOOP)\s*\(")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
SHARED = re.compile(r"__shared__[^;]*?\b(\w+)\s*(?:\[[^\]]*\]\s*)*(?:;|,)")


def clean(source: str) -> str:
    """Comments dropped, macro line continuations joined (a kernel defined in a macro is then found too), and of
    each ``#if`` / ``#elif`` / ``#else`` chain the first branch kept (each branch balances its own braces)."""
    kept, skipping = [], []          # per open #if: whether its taken branch is over (later branches skipped)
    for line in COMMENT.sub("", source).replace("\\\n", " ").split("\n"):
        directive = line.strip().split(" ")[0] if line.strip().startswith("#") else ""
        if directive in ("#if", "#ifdef", "#ifndef"):
            skipping.append(False)
            continue
        if directive in ("#elif", "#else") and skipping:
            skipping[-1] = True
            continue
        if directive == "#endif" and skipping:
            skipping.pop()
            continue
        if not any(skipping):
            kept.append(line)
    return "\n".join(kept)


def _block(text: str, start: int) -> int:
    """The index just past the brace block that opens at ``text[start]``."""
    depth, j = 1, start + 1
    while depth and j < len(text):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        j += 1
    return j


def functions(source: str) -> dict:
    """name -> (kind, parameters, body) of every __device__ / __global__ function."""
    out = {}
    for m in HEAD.finditer(source):
        name = m.group(2)
        while name in out:            # kernels a macro defines, named by its parameter
            name += "'"
        out[name] = (m.group(1), m.group(3), source[m.end(): _block(source, m.end() - 1) - 1])
    return out


def macros(source: str) -> dict:
    """name -> body of every ``#define``."""
    return {m.group(1): m.group(3) for m in DEFINE.finditer(source)}


def loop_spans(body: str) -> list:
    """(start, end) of every loop's body in ``body``: a braced block or the statement after the header."""
    spans = []
    for m in LOOP.finditer(body):
        depth, j = 1, m.end()
        while depth and j < len(body):
            depth += {"(": 1, ")": -1}.get(body[j], 0)
            j += 1
        k = j
        while k < len(body) and body[k].isspace():
            k += 1
        end = _block(body, k) if k < len(body) and body[k] == "{" else body.find(";", k) + 1
        spans.append((j, end if end > j else len(body)))
    return spans


def calls(fns: dict, defs: dict, body: str, seen=()) -> list:
    """The helpers ``body`` calls through helpers and macros, each as often as it runs: twice where in a loop."""
    out = []
    spans = loop_spans(body)
    for m in CALL.finditer(body):
        name = m.group(1)
        if name in seen:
            continue
        times = 2 if any(a <= m.start() < b for a, b in spans) else 1
        if name in fns and fns[name][0] == "__device__":
            inner = [name, *calls(fns, defs, fns[name][2], (*seen, name))]
        elif name in defs:
            inner = calls(fns, defs, defs[name], (*seen, name))
        else:
            continue
        out += inner * times
    for name, body_text in ((n, b) for n, b in defs.items() if n not in seen):
        # an object-like macro (no parameters) used as a statement, e.g. RS_RESOLVE_BODY
        if re.search(rf"\b{name}\b(?!\s*\()", body) and not re.match(r"^[\w\s.+\-*/()<>|&~^x]*$", body_text):
            out += calls(fns, defs, body_text, (*seen, name))
    return out


def unsafe_to_repeat(fns: dict) -> dict:
    """Block-wide helpers -> whether they touch their shared state after their last barrier."""
    out = {}
    for name, (kind, params, body) in fns.items():
        if kind != "__device__" or "__syncthreads" not in body:
            continue
        state = set(SHARED.findall(body)) | set(re.findall(r"\*\s*(\w+)\s*(?:,|$)", params))
        tail = body[body.rindex("__syncthreads") + len("__syncthreads"):]
        out[name] = any(re.search(rf"\b{re.escape(s)}\b", tail) for s in state)
    return out


def repeated_unsafe_calls(source: str) -> list:
    """(kernel, helper, calls) for every kernel that runs an unsafe-to-repeat helper more than once."""
    source = clean(source)
    fns, defs = functions(source), macros(source)
    unsafe = {h for h, bad in unsafe_to_repeat(fns).items() if bad}
    found = []
    for name, (kind, _, body) in fns.items():
        if kind == "__global__":
            called = calls(fns, defs, body)
            found += [(name, h, called.count(h)) for h in sorted(unsafe) if called.count(h) > 1]
    return found


@pytest.mark.parametrize("module", MODULES)
def test_no_kernel_repeats_a_helper_that_touches_shared_state_after_its_last_barrier(module):
    source = importlib.import_module(module).SOURCE
    fns = functions(clean(source))
    # the parse holds: every kernel found, no function's body running into the next one
    assert sum(kind == "__global__" for kind, _, _ in fns.values()) == clean(source).count("__global__") > 0
    assert not any(HEAD.search(body) for _, _, body in fns.values())
    assert repeated_unsafe_calls(source) == []


BUGGY = r"""
#define LOOP(i, n) for (long long i = threadIdx.x; i < (n); i += blockDim.x)
__device__ void add(double a, double* out) {
    __shared__ double part[32];
    part[threadIdx.x / 32] = a;
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(out, part[0] + part[1]);
}
__device__ void more(double* out) { add(1.0, out); }
__device__ long long scan(long long v, long long* sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
    long long s = sh[0];
    __syncthreads();
    return s;
}
#define BODY \
    add(3.0, out); \
    add(4.0, out);
extern "C" __global__ void twice(double* out) { add(2.0, out); more(out); }
extern "C" __global__ void looped(double* out) { LOOP(i, 8) { add(2.0, out); } }
extern "C" __global__ void by_macro(double* out) { BODY }
extern "C" __global__ void scans(long long* sh) { scan(1, sh); scan(2, sh); }
"""


def test_the_check_finds_the_race_it_is_for():
    """The bug's pattern is flagged however the second call comes (through a helper, a loop, a macro); a helper
    whose shared state is left alone after its last barrier may be called as often as wanted."""
    assert repeated_unsafe_calls(BUGGY) == [("twice", "add", 2), ("looped", "add", 2), ("by_macro", "add", 2)]
    fixed = BUGGY.replace("atomicAdd(out, part[0] + part[1]);\n}", "atomicAdd(out, part[0] + part[1]);\n"
                                                                    "    __syncthreads();\n}")
    assert repeated_unsafe_calls(fixed) == []
