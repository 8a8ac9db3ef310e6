"""How busy the machine is: /proc/stat and /proc/loadavg.
"""

import os
import time


def cpu_jiffies():
    """(busy, steal) jiffies of all CPUs since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return user + nice + system + irq + softirq, steal


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


class LoadMeter:
    """How busy the machine was between start and report(): cores busy on
    average, how much of that was this benchmark (its children's CPU time,
    as wait4() reports it) and how much other processes."""

    def __init__(self):
        self.t = time.monotonic()
        self.busy, self.steal = cpu_jiffies()
        ct = os.times()
        self.ours = ct.children_user + ct.children_system + ct.user + ct.system
        self.avg = loadavg()

    def report(self):
        dt = max(time.monotonic() - self.t, 1e-9)
        hz = os.sysconf("SC_CLK_TCK")
        busy, steal = cpu_jiffies()
        ct = os.times()
        ours = ct.children_user + ct.children_system + ct.user + ct.system
        b = (busy - self.busy) / hz / dt
        o = (ours - self.ours) / dt
        st = (steal - self.steal) / hz / dt
        return ("{:.0f} s; all processes kept {:.2f} of {} cores busy on "
                "average, this benchmark {:.2f}, others {:.2f}{}; loadavg "
                "{} at the start, {} at the end".format(
                    dt, b, os.cpu_count(), o, max(b - o, 0.0),
                    ", steal {:.2f}".format(st) if st >= 0.01 else "",
                    self.avg, loadavg()))
