"""bench.py --suite many: librocsparse0's 777 code objects as the inputs of one
command, --threads=1 and --threads=N against cp -r; outputs compared between
thread counts.
"""

import filecmp
import os
import shutil
import subprocess

from common import PIPELINE, log, mib, secs, sync, target
from machine import LoadMeter
from timing import rotate, run_once


def suite_many(a, work, corpus):
    _, cos = corpus["librocsparse0"]
    n = a.threads
    d = os.path.join(work, "many")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = os.path.join(d, "out")
    keep = {"hs-t1": os.path.join(d, "t1"),
            "hs-t{}".format(n): os.path.join(d, "t{}".format(n))}
    total = sum(os.path.getsize(c) for c in cos)
    base = [a.tool, "-passes=" + PIPELINE, "--output-dir=" + out]
    cmds = {
        "hs-t1": base[:2] + ["--threads=1"] + base[2:] + cos,
        "hs-t{}".format(n): base[:2] + ["--threads={}".format(n)] + base[2:]
        + cos,
        "cp-r": ["cp", "-r"] + cos + [out + "/"],
    }
    if a.baseline:
        # The same command with another build, in the same alternation.
        cmds["base-t{}".format(n)] = [a.baseline] + \
            cmds["hs-t{}".format(n)][1:]

    def before(k):
        shutil.rmtree(out, ignore_errors=True)
        if k == "cp-r":
            os.makedirs(out)
        sync()

    def after(k, rep):
        if k in keep and not os.path.exists(keep[k]):
            os.rename(out, keep[k])

    log("many inputs: {} code objects, {} MiB, {} reps".format(
        len(cos), mib(total), a.big_reps))
    # Warm the page cache with the inputs (cp -r reads them all).
    before("cp-r")
    run_once(cmds["cp-r"], os.path.join(d, "none"))
    meter = LoadMeter()
    med, rss = rotate(cmds, os.path.join(d, "none"), a.big_reps,
                      warmup=False, before=before, after=after)
    load = meter.report()
    shutil.rmtree(out, ignore_errors=True)

    # Every thread count writes the same bytes (untimed: one more count).
    extra_n = 2 * n + 1
    keep["hs-t{}".format(extra_n)] = os.path.join(d, "t{}".format(extra_n))
    p = subprocess.run(base[:2] + ["--threads={}".format(extra_n),
                                   "--output-dir=" + keep["hs-t{}".format(
                                       extra_n)]] + cos,
                       capture_output=True, text=True)
    summary = p.stderr.strip().splitlines()[-1:] if p.stderr else []
    ref = keep["hs-t1"]
    names = [os.path.basename(c) for c in cos]
    diffs = {}
    for k, dd in keep.items():
        if k == "hs-t1":
            continue
        bad = [f for f in names
               if not os.path.exists(os.path.join(dd, f)) or
               not filecmp.cmp(os.path.join(ref, f), os.path.join(dd, f),
                               shallow=False)]
        diffs[k] = bad
    changed = sum(1 for f in names if not filecmp.cmp(
        os.path.join(ref, f), os.path.join(os.path.dirname(cos[0]), f),
        shallow=False))

    print()
    print("== many: librocsparse0's {} code objects ({} MiB) as the inputs of "
          "one command, --output-dir".format(len(cos), mib(total)))
    print("Medians of {} alternating runs, each into an empty directory after "
          "sync (untimed); page cache warm.".format(a.big_reps))
    print("Machine: " + load)
    print()
    fmt = "{:<10} {:>9} {:>9} {:>9} {:>9}  {}"
    print(fmt.format("command", "wall s", "CPU s", "RSS MiB", "x cp -r",
                     "argv"))
    for k in cmds:
        print(fmt.format(k, secs(med[k]), secs(med[k + "-cpu"]),
                         mib(rss[k]), "{:.2f}".format(med[k] / med["cp-r"]),
                         " ".join(cmds[k][:4]) + " ..."))
    tn = "hs-t{}".format(n)
    print()
    print("speed-up of --threads={} over --threads=1: {:.2f}x".format(
        n, med["hs-t1"] / med[tn]))
    if a.baseline:
        print("baseline {}: {:.2f}x the wall time of this build".format(
            a.baseline, med["base-t{}".format(n)] / med[tn]))
    if summary:
        print("summary line (--threads={}): {}".format(extra_n, summary[0]))
    print("outputs that differ from the input: {} of {}".format(changed,
                                                                  len(names)))
    for k, bad in diffs.items():
        print("outputs of {} vs --threads=1: {}".format(
            k.replace("hs-t", "--threads="),
            "all {} identical".format(len(names)) if not bad else
            "{} DIFFER: {}".format(len(bad), " ".join(bad[:10]))))
    print()
    print("Targets:")
    r = med[tn] / med["cp-r"]
    target("many: --threads={} / cp -r = {:.2f} (<= 2)".format(n, r), r <= 2)
    target("many: identical bytes for --threads=1, {}, {}".format(n, extra_n),
           not any(diffs.values()))
    if not a.keep_outputs:
        shutil.rmtree(d, ignore_errors=True)
