# Model.run releases the GIL while the model runs: another Python thread runs
# Python code during the run.
#
# Not a timing test. The interpreter's switch interval is raised to 100 s, so
# the main thread never gives the GIL away on the interpreter's say-so, only
# where it releases it itself. A helper thread counts, releasing the GIL
# between counts (Event.wait); the main thread reads the count, runs the
# model, and reads it again. If the run held the GIL throughout, the helper
# could not count in between, on every run; if it releases it, the helper
# counts while the model runs (about 70 ms), which a loaded machine may delay
# but not for all of several runs.
import sys
import threading

import numpy as np

import disco
from conftest import CONVNET

RUNS = 20  # at most: the test stops at the first run during which the helper counted


def test_another_thread_runs_python_code_while_a_model_runs():
    # One worker thread: the run leaves a core to the helper on a 2-core machine.
    model = disco.compile(CONVNET, targets="host", threads=1)
    x = np.random.default_rng(0).random((8, 3, 128, 128), dtype=np.float32)
    model.run(x)  # compiled and warmed up

    started, stop = threading.Event(), threading.Event()
    count = [0]

    def counter():
        started.set()
        while not stop.wait(0.0005):  # the GIL is free while it waits
            count[0] += 1

    old_interval = sys.getswitchinterval()
    helper = threading.Thread(target=counter)
    sys.setswitchinterval(100.0)
    try:
        helper.start()
        assert started.wait(60), "the helper thread did not start"
        counted_during = []
        for _ in range(RUNS):
            before = count[0]
            model.run(x)
            counted_during.append(count[0] - before)
            if counted_during[-1] > 0:
                break
    finally:
        stop.set()
        helper.join()
        sys.setswitchinterval(old_interval)
    assert counted_during[-1] > 0, "the helper thread counted during none of %d runs: %s" % (
        len(counted_during), counted_during)
