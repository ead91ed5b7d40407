"""Every structure in STRUCTURES against the reference model (see tests/structure_contract.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from tests.structure_contract import (
    BACKENDS,
    STRUCTURES,
    ReferenceGraph,
    StreamRun,
    array_namespace,
    run_stream,
    stream_st,
)
from vinestream.structures import DynamicGraph, available, create
from vinestream.structures.backend import to_numpy
from vinestream.structures.options import Option
from vinestream.structures.registry import get

structures = pytest.mark.parametrize("name", STRUCTURES)
backends = pytest.mark.parametrize("backend", BACKENDS)


@structures
@backends
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=stream_st)
def test_random_streams_match_reference(name, backend, stream):
    run_stream(name, array_namespace(backend), stream)


@structures
@backends
def test_registered_and_empty(name, backend):
    xp = array_namespace(backend)
    g = create(name, xp)
    assert isinstance(g, DynamicGraph) and g.name == name and g.xp is xp
    run = StreamRun.start(name, xp)
    run.check()
    # empty batches of every kind change nothing and return empty results
    run.insert_vertices([])
    run.delete_vertices([])
    run.insert_edges([], [], [])
    run.delete_edges([], [])
    run.check()


@structures
@backends
def test_reinserting_a_live_vertex_keeps_its_edges(name, backend):
    run = StreamRun.start(name, array_namespace(backend))
    run.insert_vertices([0, 1, 2])
    run.insert_edges([0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0])
    run.insert_vertices([1, 1, 2, 3])
    run.check()
    assert run.graph.num_edges == 3


@structures
@backends
def test_deleted_id_reused_starts_with_no_edges(name, backend):
    run = StreamRun.start(name, array_namespace(backend))
    run.insert_vertices(list(range(6)))
    src = [0, 0, 1, 2, 3, 3, 4, 5, 3]
    dst = [3, 1, 3, 3, 4, 0, 3, 3, 3]   # vertex 3 has in-, out- and a self-loop
    run.insert_edges(src, dst, np.arange(len(src), dtype=np.float32))
    run.check()
    run.delete_vertices([3, 3])
    run.check()
    run.insert_vertices([3])      # the same internal id comes back, bare
    run.check()
    g = run.graph
    assert int(to_numpy(g.degree(run.xp.asarray(np.array([3], np.int32))))[0]) == 0
    assert not to_numpy(g.contains(run.xp.asarray(np.array([0, 3, 3], np.int32)),
                                   run.xp.asarray(np.array([3, 4, 3], np.int32)))).any()
    run.insert_edges([3, 1], [1, 3], [7.0, 8.0])   # and takes new edges like any vertex
    run.check()
    run.delete_vertices([3])
    run.delete_vertices([3])      # deleting a dead id does nothing
    run.check()


@structures
@backends
def test_large_batches_with_churn(name, backend):
    """Thousands of edges per batch, upserts, deletes and vertex churn; full check after each batch."""
    rng = np.random.default_rng(7)
    run = StreamRun.start(name, array_namespace(backend))
    n = 3000
    ids = rng.permutation(np.arange(10_000))[:n]       # sparse ids force capacity growth
    run.insert_vertices(ids.tolist())
    run.check(1, max_queries=512)
    for step in range(4):
        live = np.array(sorted(run.model.live))
        src = rng.choice(live, 6000)
        dst = rng.choice(live, 6000)
        # a third of the batch re-inserts existing edges (weight updates)
        existing = run.model.sorted_edges()
        if existing:
            pick = rng.choice(len(existing), min(2000, len(existing)), replace=False)
            src[:len(pick)] = [existing[i][0] for i in pick]
            dst[:len(pick)] = [existing[i][1] for i in pick]
        run.insert_edges(src, dst, rng.standard_normal(6000).astype(np.float32))
        run.check(10 + step, max_queries=512)
        existing = run.model.sorted_edges()
        pick = rng.choice(len(existing), len(existing) // 3, replace=False)
        run.delete_edges(np.r_[[existing[i][0] for i in pick], rng.choice(live, 500)],
                         np.r_[[existing[i][1] for i in pick], rng.choice(live, 500)])
        run.check(20 + step, max_queries=512)
        dying = rng.choice(live, 200, replace=False)
        run.delete_vertices(dying.tolist())
        run.check(30 + step, max_queries=512)
        run.insert_vertices(dying[:100].tolist() + rng.integers(0, 20_000, 50).tolist())
        run.check(40 + step, max_queries=512)
    assert run.graph.num_edges > 5000


@structures
@backends
def test_reading_builds_the_whole_adjacency_once(name, backend):
    run = StreamRun.start(name, array_namespace(backend))
    run.insert_vertices([0, 1, 2, 3])
    run.insert_edges([0, 1, 2, 0], [1, 2, 0, 3], [1.0, 2.0, 3.0, 4.0])
    g = run.graph
    builds = []
    cls_adjacency = type(g).adjacency

    def counted(self, vertices=None):
        builds.append(vertices is None)
        return cls_adjacency(self, vertices)

    type(g).adjacency, restore = counted, cls_adjacency
    try:
        with g.reading():
            first = g.adjacency()
            assert g.adjacency() is first and g.adjacency(None) is first
            rows = g.adjacency(g.xp.asarray([1, 0], dtype=np.int32))     # rows are built each time
            assert to_numpy(rows.offsets).tolist() == [0, 1, 3]
            assert builds == [True, False]
        assert "adjacency" not in vars(g)        # the method is the class's again
        again = g.adjacency()
        assert again is not first and builds == [True, False, True]
        assert to_numpy(again.offsets).tolist() == to_numpy(first.offsets).tolist()
    finally:
        type(g).adjacency = restore
    run.insert_edges([3], [0], [5.0])        # outside reading(), the next whole adjacency sees the change
    assert int(to_numpy(g.adjacency().offsets)[-1]) == 5


# -- declared options ---------------------------------------------------------------------
# Every structure declares its constructor's options (``options_spec``); before, each read
# ``options.get(name, default)``, so a misspelt option was ignored and a wrong value clamped,
# truncated or failed inside int() without naming the option.
registered = pytest.mark.parametrize("name", available())


def _wrong_values(opt: Option) -> list:
    """Values of the wrong type for ``opt`` (each must be refused)."""
    if opt.kind is bool:
        return ["false", "yes", 2, 0.5]
    if opt.kind is str:
        return [1, True, "no-such-" + opt.choices[0]]
    wrong = ["8", "abc", True, float("nan"), float("inf")]
    return [*wrong, 2.5] if opt.kind is int else wrong


@registered
def test_unknown_options_are_refused_naming_the_known_ones(name):
    spec = get(name).options_spec
    with pytest.raises(ValueError) as exc:
        create(name, np, no_such_option=1)
    message = str(exc.value)
    assert "\n" not in message and message.startswith(f"{name}: unknown option 'no_such_option'")
    for option, opt in spec.items():
        assert (f" {option}," in message or message.endswith(f" {option}")) != opt.internal, (option, message)
    # a near miss is named: every option misspelt by dropping its last letter
    for option in spec:
        with pytest.raises(ValueError, match=f"unknown option '{option[:-1]}' \\(did you mean '{option}'\\?\\)"):
            create(name, np, **{option[:-1]: spec[option].default})
    # the arguments of create() are not options
    with pytest.raises(ValueError, match="unknown option 'xp'"):
        create(name, np, xp=np)


@registered
def test_every_declared_option_default_constructs(name):
    spec = get(name).options_spec
    assert spec, f"{name} declares no options"
    plain = create(name, np)
    assert set(plain.options) == set(spec)
    for option, opt in spec.items():
        assert opt.doc, f"{name}.{option} has no meaning declared"
        given = create(name, np, **{option: opt.default})
        assert given.options == plain.options, option
    everything = create(name, np, **{option: opt.default for option, opt in spec.items()})
    assert everything.options == plain.options
    StreamRun(graph=everything, model=ReferenceGraph(), xp=np).check()


@registered
def test_wrong_option_values_are_refused_naming_the_option(name):
    for option, opt in get(name).options_spec.items():
        for value in _wrong_values(opt):
            with pytest.raises(ValueError) as exc:
                create(name, np, **{option: value})
            message = str(exc.value)
            assert message.startswith(f"{name} option {option}={value!r}: expected "), message
            assert "\n" not in message
        if opt.kind is int and isinstance(opt.low, int):
            with pytest.raises(ValueError, match=f"{name} option {option}={opt.low - 1}: expected"):
                create(name, np, **{option: opt.low - 1})
