"""Issue acceptance: a real SNAP log with deletions and vertex deletions mixed in, replayed through
every structure at several batch sizes, ends in exactly the oracle's graph, and summary.parquet says so."""
import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.oracle import Oracle
from tests.structure_contract import STRUCTURES
from vinestream.connectors.files import convert
from vinestream.connectors.shared_data import shared_data_file
from vinestream.connectors.synthetic import mix_deletions
from vinestream.stream.app.replay import replay

EMAIL = shared_data_file("temporal/email-Eu-core-temporal.txt.gz")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(EMAIL is None, reason="needs ../shared/data (SNAP email-Eu-core)")]


@pytest.fixture(scope="module")
def mixed_log(tmp_path_factory):
    """email-Eu-core as events, with 10% edge deletions and 2% vertex deletions mixed in, and its oracle."""
    tmp = tmp_path_factory.mktemp("email")
    converted = tmp / "email.parquet"
    convert(str(EMAIL), str(converted), columns="src,dst,ts")
    log = mix_deletions(pq.read_table(converted), edge_delete_fraction=0.1,
                        vertex_delete_fraction=0.02, seed=1)
    path = tmp / "email-mixed.parquet"
    pq.write_table(log, path)
    ops = log.column("op").to_numpy()
    assert (ops == 2).sum() > 10_000 and (ops == 4).sum() > 10     # the mix really has both
    oracle = Oracle()
    w = log.column("weight").to_pylist()
    oracle.apply_all(zip(ops.tolist(), log.column("src").to_pylist(), log.column("dst").to_pylist(), w))
    return path, oracle


@pytest.mark.parametrize("batch_size", [997, 20_000, 400_000])
@pytest.mark.parametrize("structure", STRUCTURES)
def test_replay_ends_in_oracle_state(mixed_log, structure, batch_size, tmp_path):
    path, oracle = mixed_log
    report, pipeline = replay([str(path)], structure=structure, batch_size=batch_size,
                              out=str(tmp_path / "out"), progress=False)
    src, dst, _ = pipeline.edges_external()
    assert set(zip(src.tolist(), dst.tolist())) == set(oracle.edges)
    assert set(pipeline.vertices_external().tolist()) == oracle.vertices
    summary = pq.read_table(tmp_path / "out" / "summary.parquet").to_pylist()
    last = summary[-1]
    assert last["epoch"] == len(summary) == report.batches
    assert last["edges"] == len(oracle.edges)
    assert last["vertices"] == len(oracle.vertices)
    assert sum(row["events"] for row in summary) == pq.ParquetFile(path).metadata.num_rows
    assert sum(row["inserted"] for row in summary) - sum(row["deleted"] for row in summary) \
        == len(oracle.edges)
    assert np.all(np.diff([row["epoch"] for row in summary]) == 1)
