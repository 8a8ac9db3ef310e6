"""bench.py --suite capi: hotswap-capi-threads (capi-threads.cpp):
librocsparse0's three largest gfx803 objects through the C API, on one
thread and on two at once.
"""

import os
import re
import subprocess

from common import target
from machine import LoadMeter


def suite_capi(a, work, corpus):
    _, cos = corpus["librocsparse0"]
    exe = os.path.join(os.path.dirname(os.path.dirname(a.tool)), "utils",
                       "bench", "hotswap-capi-threads")
    print()
    print("== capi: hotswap-capi-threads (C API), librocsparse0's three "
          "largest gfx803 objects")
    if not os.path.exists(exe):
        print("({} is not built)".format(exe))
        return
    three = sorted((c for c in cos if c.endswith("-gfx803.co")),
                   key=os.path.getsize, reverse=True)[:3]
    meter = LoadMeter()
    p = subprocess.run([exe, "-reps={}".format(a.capi_reps), "-threads=2"]
                       + three, capture_output=True, text=True)
    load = meter.report()
    print("Machine: " + load)
    print(p.stdout.rstrip())
    if p.returncode != 0:
        print("FAILED: " + p.stderr.strip())
        target("capi: every output identical to the serial run's", False)
        return
    m = re.search(r"speed-up ([\d.]+)x", p.stdout)
    print()
    print("Targets:")
    if m:
        target("capi: two threads {}x faster than one (>= 1.8 on two idle "
               "cores)".format(m.group(1)), float(m.group(1)) >= 1.8)
