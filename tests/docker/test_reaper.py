"""Containers of a killed swe-forge process are removed by the next one; a live one's are not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from swe_forge.engine import LABEL_PREFIX, Engine
from tests.docker.conftest import ExampleImages

HOLD = """
import sys, time
from swe_forge.engine import Engine
engine = Engine()
with engine.container(sys.argv[1], ["/bin/true"]) as ctr:
    print(ctr.id, flush=True)
    time.sleep(600)
"""


def _ids(engine: Engine) -> set[str]:
    # One request (the SDK's list() inspects each container, and fails when another swe-forge
    # run on the engine removes one meanwhile).
    return {str(c["Id"]) for c in engine.api.containers(all=True)}


def _hold(image: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, image], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def test_a_killed_process_containers_are_reaped(
    engine: Engine, example_images: ExampleImages
) -> None:
    image = str(next(iter(example_images.records.values()))["instance_image"])
    dead, dead_ctr = _hold(image)
    live, live_ctr = _hold(image)
    try:
        os.kill(dead.pid, signal.SIGKILL)  # no clean-up runs
        dead.wait(30)
        ids = _ids(engine)
        assert live_ctr in ids
        owner = engine.client.containers.get(live_ctr).labels[LABEL_PREFIX + ".owner"]
        assert owner.split(":")[1] == str(live.pid)
        # Every swe-forge run reaps at its start: another one on this engine (a quickstart
        # beside the suite) may have removed the dead process's container already. Either
        # way it is gone after this reap, and the live one's stays.
        engine.reap_orphans()
        ids = _ids(engine)
        assert dead_ctr not in ids and live_ctr in ids
    finally:
        live.kill()
        live.wait(30)
        time.sleep(0.5)
        engine.reap_orphans()
    assert live_ctr not in _ids(engine)
