"""Where the time goes: perf (or callgrind when perf cannot sample) on
hotswap-opt, and hardware counters when the machine has them.
"""

import os
import re
import shutil
import subprocess


def perf_works():
    """perf can sample (cpu-clock: a software event, also in VMs without a
    PMU)."""
    if not shutil.which("perf"):
        return False
    p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o",
                        os.devnull, "true"], capture_output=True, text=True)
    return p.returncode == 0


def hw_counters():
    """Whether perf has hardware counters (`perf stat -e instructions`)."""
    if not shutil.which("perf"):
        return False
    p = subprocess.run(["perf", "stat", "-e", "instructions", "true"],
                       capture_output=True, text=True)
    return p.returncode == 0 and "not supported" not in p.stderr


def callgrind(tool, args, work, top=15):
    """Instructions by function (self), one run under callgrind."""
    if not shutil.which("valgrind"):
        return "(valgrind is not available)"
    cg = os.path.join(work, "callgrind.out")
    subprocess.run(["valgrind", "--tool=callgrind",
                    "--callgrind-out-file=" + cg, tool] + args,
                   capture_output=True, check=True)
    rep = subprocess.run(["callgrind_annotate", "--inclusive=no", cg],
                         capture_output=True, text=True).stdout
    os.unlink(cg)
    lines = []
    for l in rep.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*([\d.]+)%\)\s+(.*)", l)
        if not m:
            continue
        name = m.group(3)
        if "PROGRAM TOTALS" in name:
            lines.append("  {} instructions in all".format(m.group(1)))
            continue
        name = re.sub(r"^\?\?\?:|^\S+/[^:]*:", "", name)
        name = re.sub(r" \[/.*\]$", "", name)
        lines.append("  {:>6}%  {}".format(m.group(2), name[:110]))
        if len(lines) > top:
            break
    return "\n".join(lines)


def profile(tool, args, work, runs=5):
    """Where hotswap-opt's time goes (`tool args`, `runs` runs under perf
    record with DWARF call graphs, so that inclusive times are right without
    frame pointers): the top functions by self time and the project's own
    functions (and the MC disassembler) by inclusive time."""
    cmd = " ".join("'{}'".format(x) for x in [tool] + args)
    lines = []
    if perf_works():
        data = os.path.join(work, "perf.data")
        subprocess.run(["perf", "record", "-q", "-F", "500", "--call-graph",
                        "dwarf,16384", "-o", data, "--", "sh", "-c",
                        "for i in $(seq {}); do {} 2>/dev/null; done".format(
                            runs, cmd)], capture_output=True, check=True)
        comm = ["--comm", os.path.basename(tool)]
        self_ = subprocess.run(
            ["perf", "report", "-i", data, "--stdio", "--no-children",
             "--sort", "symbol", "-g", "none", "--percent-limit", "1"] + comm,
            capture_output=True, text=True).stdout
        incl = subprocess.run(
            ["perf", "report", "-i", data, "--stdio", "--children", "--sort",
             "symbol", "-g", "none"] + comm,
            capture_output=True, text=True).stdout
        m = re.search(r"# Samples: (\S+)", self_)
        lines.append("perf record --call-graph dwarf, {} runs, {} samples; "
                     "self time (>= 1%):".format(runs, m.group(1) if m else "?"))
        for l in self_.splitlines():
            if re.match(r"\s+\d+\.\d+%", l):
                l = re.sub(r"(\s+-)+\s*$", "", l.strip())
                lines.append("  " + re.sub(r"\s+", " ", l)[:120])
        lines.append("inclusive time (>= 2%) of the project's functions, the "
                     "MC disassembler, memset/memmove, page faults and file "
                     "writes:")
        keep = re.compile(r"hotswap::|Disassembler|memset|memmove|"
                          r"exc_page_fault|copy_file_range|pwrite|^main$")
        for l in incl.splitlines():
            mm = re.match(r"\s+(\d+\.\d+)%\s+(\d+\.\d+)%\s+\[.\]\s+(.*)",
                          l)
            if not mm or float(mm.group(1)) < 2:
                continue
            name = mm.group(3).strip()
            if keep.search(name):
                lines.append("  {:>6}%  {}".format(mm.group(1), name[:110]))
        os.unlink(data)
    else:
        lines.append("(perf cannot sample here)")
    return "\n".join(lines)
