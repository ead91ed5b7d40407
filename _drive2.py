import sys, time, logging, threading, faulthandler
faulthandler.dump_traceback_later(40, exit=True)
from pathlib import Path
from vinestream.connectors.tansu import TansuBroker, tansu_binary
from tests.event_logs import random_events, write_log
from vinestream.connectors.kafka import produce
b = TansuBroker(tansu_binary()).start()
tmp = Path("/tmp/sigdbg"); import shutil; shutil.rmtree(tmp, ignore_errors=True); tmp.mkdir()
log = random_events(4000, seed=21)
print(produce(write_log(tmp / "log.parquet", log), "t", b.bootstrap, fmt="json", partitions=1), flush=True)
logging.basicConfig(level=logging.INFO)
from tests.kafka_helpers import worker_config, run
cfg = worker_config(b.bootstrap, "t", "g", format="json", batch_size=200, max_poll_records=200, checkpoint_dir=str(tmp/"ck"))
r, p = run(cfg)
print(r.events, r.batches, r.stopped_by)
b.stop()
