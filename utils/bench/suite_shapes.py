"""bench.py --suite shapes: objects with the shapes of real libraries
(gen_shapes.py; issue 45), at three sizes each (--shapes-scale S: S/16,
S/4 and S of the full counts, so the curve shows whether the per-kernel,
per-symbol and per-metadata-byte costs stay linear):

  tensile  rocBLAS's Tensile objects: at S=1, 14 075 kernels, 1.8M local
           symbols, a 50 MB metadata note, 250 MB of code (~390 MiB)
  small    many small kernels: at S=1, 100 000 kernels of < 1 KiB
  host     a HIP host library shaped as librocsparse0's (gen_host.py): at
           S=1, 114 bundles of 7 code objects (798), ~1.3 GB

Every command is timed until its output is on disk: `sh -c 'CMD && sync
OUT'`, after an untimed sync, for cp and every command that writes. Against
cp: -passes=trampoline,stub-syms, -passes=verify, -passes=print<kernels>,
-passes=restore (of the rewritten object), and, on the largest tensile
object, -passes=swap-kernels<with=FILE> (FILE: its first 16 kernels) and a
plain llvm-objcopy copy. Peak RSS is set against the bytes that may have to
be read or rewritten (the file less its code) + 64 MiB. -time-passes of the
rewrite, verify and print<kernels> on the largest object of each shape.

The host libraries: -passes=trampoline,stub-syms against cp of its output
(the rewritten library), -passes=verify of the rewritten library against
cp of that file, -passes=restore against cp of the original (its output);
the goal for a whole library is 1.2x, peak RSS 512 MiB (the libs suite's
bound). Checked on each: restore gives back the original byte for byte,
and the rewritten library loads with test/FatBinary's fake HIP runtime,
every bundle it registers the library's bytes (fatbin.py check-capture).
"""

import filecmp
import os
import shutil
import subprocess
import sys

import gen_host
from common import HERE, LLVM, MCPU, MiB, log, mib, ms, sh, sync, target
from inputs import exec_bytes
from machine import LoadMeter
from suite_libs import RSS_LIMIT, fake_hip, run_fake_hip
from timing import rotate

# Kernels per object; for host, code objects per library (7 per bundle).
FULL = {"tensile": 14075, "small": 100000, "host": 800}
HOST_TARGETS = len(gen_host.TARGETS)
# Issue 45's goal for a whole HIP library: 1.2x cp of its own output.
HOST_GOAL = 1.2


def shaped(cache, shape, n, name):
    """Generates, assembles and links one object (cached)."""
    so = os.path.join(cache, name + ".so")
    if os.path.exists(so):
        return so
    if shape == "host":
        log("generating {} ({} code objects)".format(name, n))
        p = subprocess.run(
            [sys.executable, os.path.join(HERE, "gen_host.py"), so,
             "--bundles", str(n // HOST_TARGETS), "--objects",
             os.path.join(cache, "host-objects")],
            check=True, capture_output=True, text=True)
        log(p.stdout.strip())
        return so
    log("generating {} ({} {} kernels)".format(name, n, shape))
    s = os.path.join(cache, name + ".s")
    o = os.path.join(cache, name + ".o")
    sh([sys.executable, os.path.join(HERE, "gen_shapes.py"), shape, s,
        "--kernels", str(n), "--mcpu", MCPU])
    sh([LLVM + "/llvm-mc", "-triple=amdgcn-amd-amdhsa", "-mcpu=" + MCPU,
        "-filetype=obj", s, "-o", o])
    sh([LLVM + "/ld.lld", "-shared", o, "-o", so + ".tmp"])
    os.rename(so + ".tmp", so)
    for f in (s, s + ".note", o):
        os.unlink(f)
    return so


def to_disk(argv, out):
    """argv, then its output flushed to disk, in one timed process."""
    return ["sh", "-c", '"$@" && sync "$0"', out] + argv


def section_sizes(path):
    """(.symtab entries, note bytes) from llvm-readelf -S."""
    out = subprocess.run([LLVM + "/llvm-readelf", "-S", "-W", path],
                         check=True, capture_output=True, text=True).stdout
    syms = note = 0
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 6 and f[1] == ".symtab":
            syms = int(f[5], 16) // 24
        if len(f) > 6 and f[2] == "NOTE":
            note += int(f[5], 16)
    return syms, note


def host_checks(a, path, rew, work):
    """restore gives back path byte for byte; rew loads with the fake HIP
    runtime, every bundle it registers rew's bytes. Returns (ok, a line)."""
    back = os.path.join(work, "shape-restored.so")
    sh([a.tool, "-passes=restore", rew, "-o", back],
       stderr=subprocess.DEVNULL)
    same = filecmp.cmp(path, back, shallow=False)
    os.unlink(back)
    line = "restore {}".format("byte-identical" if same else
                               "DIFFERENT BYTES")
    fh = fake_hip(a, work)
    if not fh:
        return same, line + "; not loaded (no fake HIP runtime)"
    dump = os.path.join(work, "host-dump")
    p = run_fake_hip(fh, rew, dump)
    c = subprocess.run(
        [sys.executable, os.path.join(a.root, "test", "FatBinary", "Inputs",
                                      "fatbin.py"), "check-capture", dump,
         rew], capture_output=True, text=True)
    shutil.rmtree(dump, ignore_errors=True)
    loads = p.returncode == 0 and c.returncode == 0
    last = (c.stdout.strip().splitlines() or ["?"])[-1]
    line += "; the rewritten library {} with the fake HIP runtime ({})".format(
        "loads" if loads else "FAILS to load", last if loads else
        (p.stdout + p.stderr + c.stdout).strip()[-300:])
    return same and loads, line


def measure_host(a, n, name, path, out, rew, work):
    """A host library's rewrite, verify and restore (of the rewritten one,
    rew) against cp of the input and of rew, then host_checks."""
    tool = a.tool
    size = os.path.getsize(path)
    sh([tool, "-passes=trampoline,stub-syms", path, "-o", rew])
    cmds = {
        "cp": to_disk(["cp", path, out], out),
        "cp-out": to_disk(["cp", rew, out], out),
        "rewrite": to_disk([tool, "-passes=trampoline,stub-syms", path,
                            "-o", out], out),
        "verify": [tool, "-passes=verify", "-disable-output", rew],
        "restore": to_disk([tool, "-passes=restore", rew, "-o", out], out),
    }
    if a.baseline:
        b = a.baseline
        cmds["b-rewrite"] = to_disk([b, "-passes=trampoline,stub-syms", path,
                                     "-o", out], out)
        cmds["b-verify"] = [b, "-passes=verify", "-disable-output", rew]
        cmds["b-restore"] = to_disk([b, "-passes=restore", rew, "-o", out],
                                    out)
    reps = a.reps if size < 64 * MiB else max(3, min(a.reps, 5))
    log("measuring {} ({} code objects, {} MiB, {} reps)".format(
        name, n, mib(size), reps))
    med, rss = rotate(cmds, out, reps, before=lambda k: sync())
    ok, checks = host_checks(a, path, rew, work)
    bundles = n // HOST_TARGETS
    kernels = HOST_TARGETS * sum(gen_host.CLASSES[gen_host.class_of(
        i, bundles)][0] for i in range(bundles))
    return dict(shape="host", n=n, bundles=bundles, kernels=kernels,
                size=size, out=os.path.getsize(rew), med=med, rss=rss,
                path=path, ok=ok, checks=checks)


def time_passes(tool, argv, work):
    sync()
    p = subprocess.run([tool, "-time-passes", "--threads=1"] + argv,
                       capture_output=True, text=True, cwd=work)
    return (p.stdout + p.stderr).rstrip()


def print_times(a, rows, width, ops):
    """Each row's wall and CPU medians and, with a baseline, its ops against
    the baseline's (names padded to width)."""
    print()
    print("Wall ms (CPU ms):")
    for name, r in rows.items():
        m = r["med"]
        keys = [k for k in m if not k.endswith("-cpu")]
        print("  {:<{}} ".format(name, width) + "  ".join(
            "{} {} ({})".format(k, ms(m[k]), ms(m[k + "-cpu"])) for k in keys))
    if not a.baseline:
        return
    print()
    print("Baseline {} (same alternating runs), wall and peak RSS:"
          .format(a.baseline))
    for name, r in rows.items():
        m, rs = r["med"], r["rss"]
        print("  {:<{}} ".format(name, width) + "  ".join(
            "{} {}->{} ms {}->{} MiB".format(
                k, ms(m["b-" + k]), ms(m[k]), mib(rs["b-" + k]), mib(rs[k]))
            for k in ops))


def suite_shapes(a, work):
    scale = a.shapes_scale
    only = set(filter(None, a.only.split(",")))
    inputs = []
    for shape in ("tensile", "small", "host"):
        for f in (16, 4, 1):
            n = max(1, int(round(FULL[shape] * scale / f)))
            if shape == "host":  # whole bundles
                n = HOST_TARGETS * max(1, int(round(FULL[shape] * scale / f /
                                                    HOST_TARGETS)))
            name = "{}-{}".format(shape, n)
            if not only or name in only or shape in only:
                inputs.append((shape, n, name))
    if not inputs:
        return
    paths = {name: shaped(a.cache, shape, n, name)
             for shape, n, name in inputs}
    largest_t = max((x for x in inputs if x[0] == "tensile"),
                    key=lambda x: x[1], default=None)
    swap_with = None
    if largest_t:
        swap_with = shaped(a.cache, "tensile", 16, "tensile-16")

    tool = a.tool
    out = os.path.join(work, "shape-out.co")
    rew = os.path.join(work, "shape-rewritten.co")
    meter = LoadMeter()
    rows = {}
    hosts = {}
    for shape, n, name in inputs:
        path = paths[name]
        size = os.path.getsize(path)
        if shape == "host":
            hosts[name] = measure_host(a, n, name, path, out, rew, work)
            continue
        code = exec_bytes(path)
        syms, note = section_sizes(path)
        sh([tool, "-passes=trampoline,stub-syms", path, "-o", rew])
        cmds = {
            "cp": to_disk(["cp", path, out], out),
            "rewrite": to_disk([tool, "-passes=trampoline,stub-syms", path,
                                "-o", out], out),
            "verify": [tool, "-passes=verify", "-disable-output", path],
            "print": [tool, "-passes=print<kernels>", "-disable-output",
                      path],
            "restore": to_disk([tool, "-passes=restore", rew, "-o", out],
                               out),
        }
        if a.baseline:
            b = a.baseline
            cmds["b-rewrite"] = to_disk([b, "-passes=trampoline,stub-syms",
                                         path, "-o", out], out)
            cmds["b-verify"] = [b, "-passes=verify", "-disable-output", path]
            cmds["b-print"] = [b, "-passes=print<kernels>",
                               "-disable-output", path]
            cmds["b-restore"] = to_disk([b, "-passes=restore", rew, "-o",
                                         out], out)
        if largest_t and name == largest_t[2]:
            cmds["swap"] = to_disk(
                [tool, "-passes=swap-kernels<with={}>".format(swap_with),
                 path, "-o", out], out)
            cmds["objcopy"] = to_disk([LLVM + "/llvm-objcopy", path, out],
                                      out)
        reps = a.reps if size < 64 * MiB else max(3, min(a.reps, 5))
        log("measuring {} ({} kernels, {} MiB, {} reps)".format(
            name, n, mib(size), reps))
        med, rss = rotate(cmds, out, reps, before=lambda k: sync())
        rows[name] = dict(shape=shape, n=n, size=size, code=code, syms=syms,
                          note=note, med=med, rss=rss, path=path)
    for f in (out, rew):
        if os.path.exists(f):
            os.unlink(f)
    load = meter.report()

    print()
    print("== shapes: objects shaped as real libraries (gen_shapes.py, {}; "
          "--shapes-scale {})".format(MCPU, scale))
    print("Medians of {} alternating runs (3-5 above 64 MiB); wall time "
          "until the output is on disk (sync); peak RSS from wait4().".format(
              a.reps))
    print("Machine: " + load)
    if rows:
        report_objects(a, rows)
    if hosts:
        report_hosts(a, hosts)

    print()
    print("Targets (issue 45):")
    for name, r in rows.items():
        if r["n"] != max(x["n"] for x in rows.values()
                         if x["shape"] == r["shape"]):
            continue
        m, rs = r["med"], r["rss"]
        bound = r["size"] - r["code"] + 64 * MiB
        for k in ("rewrite", "verify", "print", "restore", "swap"):
            if k not in m:
                continue
            x = m[k] / m["cp"]
            target("{} {}: {:.2f}x cp (<= 3)".format(name, k, x), x <= 3)
            target("{} {}: peak RSS {} MiB (<= {} MiB: file - code + 64)"
                   .format(name, k, mib(rs[k]), mib(bound)), rs[k] <= bound)
    if hosts:
        name, r = max(hosts.items(), key=lambda x: x[1]["n"])
        m, rs = r["med"], r["rss"]
        x = m["rewrite"] / m["cp-out"]
        target("{} rewrite: {:.2f}x cp of its output (<= {})".format(
            name, x, HOST_GOAL), x <= HOST_GOAL)
        for k, yard in (("verify", "cp-out"), ("restore", "cp")):
            x = m[k] / m[yard]
            target("{} {}: {:.2f}x {} (<= 3)".format(name, k, x, yard),
                   x <= 3)
        for k in ("rewrite", "verify", "restore"):
            target("{} {}: peak RSS {} MiB (<= {} MiB)".format(
                name, k, mib(rs[k]), mib(RSS_LIMIT)), rs[k] <= RSS_LIMIT)
        target("{}: {}".format(name, r["checks"]), r["ok"])

    for shape in ("tensile", "small", "host"):
        big = [(k, v) for k, v in list(rows.items()) + list(hosts.items())
               if v["shape"] == shape]
        if not big:
            continue
        name, r = max(big, key=lambda x: x[1]["n"])
        passes = (("rewrite", ["-passes=trampoline,stub-syms"]),
                  ("verify", ["-passes=verify"]),
                  ("print<kernels>", ["-passes=print<kernels>"]))
        for what, p in passes[:1] if shape == "host" else passes:
            print()
            print("-time-passes --threads=1, {}, {}:".format(what, name))
            argv = p + [r["path"], "-o", os.path.join(work, "tp.co")]
            if what != "rewrite":
                argv = p + ["-disable-output", r["path"]]
            txt = time_passes(tool, argv, work)
            # print<kernels>'s report itself is not of interest here.
            lines = txt.splitlines()
            start = next((i for i, l in enumerate(lines)
                          if "===---" in l), 0)
            print("\n".join(lines[max(0, start - 1):]))
        tp = os.path.join(work, "tp.co")
        if os.path.exists(tp):
            os.unlink(tp)


def report_objects(a, rows):
    print()
    hdr = ("input", "kernels", "symbols", "note MB", "MiB", "cp ms",
           "rewrite", "verify", "print", "restore", "RSS MiB", "bound")
    fmt = ("{:<14} {:>7} {:>8} {:>7} {:>6} {:>7} {:>8} {:>8} {:>8} {:>8} "
           "{:>8} {:>6}")
    print(fmt.format(*hdr))
    print(fmt.format("", "", "", "", "", "", "x cp", "x cp", "x cp", "x cp",
                     "rw/vf/pr/rs", "MiB"))
    for name, r in rows.items():
        m, rs = r["med"], r["rss"]
        bound = r["size"] - r["code"] + 64 * MiB
        print(fmt.format(
            name, r["n"], r["syms"], "{:.1f}".format(r["note"] / 1e6),
            mib(r["size"]), ms(m["cp"]),
            *["{:.2f}".format(m[k] / m["cp"]) for k in
              ("rewrite", "verify", "print", "restore")],
            "/".join("{:.0f}".format(rs[k] / MiB) for k in
                     ("rewrite", "verify", "print", "restore")),
            mib(bound)))
    print_times(a, rows, 14, ("rewrite", "verify", "print", "restore"))

    print()
    print("Scaling (rewrite): us per kernel at each size")
    for shape in ("tensile", "small"):
        rs_ = [r for r in rows.values() if r["shape"] == shape]
        if not rs_:
            continue
        print("  " + shape + ": " + ", ".join(
            "{} kernels {:.1f} us ({:.1f} us above cp)".format(
                r["n"], r["med"]["rewrite"] / r["n"] * 1e6,
                (r["med"]["rewrite"] - r["med"]["cp"]) / r["n"] * 1e6)
            for r in rs_))



def report_hosts(a, hosts):
    print()
    print("HIP host libraries shaped as librocsparse0's (gen_host.py): "
          "rewrite and verify")
    print("against cp of the rewritten library (its output, the file verify "
          "reads), restore")
    print("(of the rewritten one) against cp of the original (its output)")
    print()
    fmt = ("{:<10} {:>7} {:>7} {:>7} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} "
           "{:>7} {:>11}")
    print(fmt.format("input", "objects", "kernels", "bundles", "MiB",
                     "out MiB", "cp ms", "cp-out", "rewrite", "verify",
                     "restore", "RSS MiB"))
    print(fmt.format("", "", "", "", "", "", "", "ms", "x cp-out",
                     "x cp-out", "x cp", "rw/vf/rs"))
    for name, r in hosts.items():
        m, rs = r["med"], r["rss"]
        print(fmt.format(
            name, r["n"], r["kernels"], r["bundles"], mib(r["size"]),
            mib(r["out"]), ms(m["cp"]), ms(m["cp-out"]),
            "{:.2f}".format(m["rewrite"] / m["cp-out"]),
            "{:.2f}".format(m["verify"] / m["cp-out"]),
            "{:.2f}".format(m["restore"] / m["cp"]),
            "/".join("{:.0f}".format(rs[k] / MiB) for k in
                     ("rewrite", "verify", "restore"))))
    print_times(a, hosts, 10, ("rewrite", "verify", "restore"))
    print()
    print("Scaling (rewrite): " + ", ".join(
        "{} objects {:.0f} us each ({:.0f} us above cp-out)".format(
            r["n"], r["med"]["rewrite"] / r["n"] * 1e6,
            (r["med"]["rewrite"] - r["med"]["cp-out"]) / r["n"] * 1e6)
        for r in hosts.values()))
    for name, r in hosts.items():
        print("  {}: {}".format(name, r["checks"]))
