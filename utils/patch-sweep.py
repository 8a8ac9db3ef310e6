#!/usr/bin/env python3
"""Applies one patch-insns rule to every code object given and proves the
outputs: every site applied or refused (counted from print<sites>), every
output verifies, a second run writes the same bytes, restore gives the
input back byte for byte. Prints one line per object and a summary.

  utils/patch-sweep.py --tool build/bin/hotswap-opt \
      --rule 'match=^ds_read2_b32;where=replace;insert=RULE.s' OBJ...

Not part of CI (minutes on a corpus); see README, "Patching instructions".
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--rule", required=True)
    ap.add_argument("objects", nargs="+")
    a = ap.parse_args()
    totals = dict(objects=0, with_sites=0, sites=0, applied=0, failures=0)
    refusals = {}
    placed = {}  # how applied sites are placed: "site" (in place), "clone"
    not_in_place = {}  # place=site: why a kernel was copied instead
    with tempfile.TemporaryDirectory() as tmp:
        out, again, back = (os.path.join(tmp, n) for n in ("o", "a", "r"))
        for obj in a.objects:
            totals["objects"] += 1
            p = run([a.tool, "--kernels-format=json",
                     "-passes=print<sites;%s>" % a.rule, obj])
            if p.returncode:
                print("FAIL print<sites> %s: %s" % (obj, p.stderr.strip()))
                totals["failures"] += 1
                continue
            s = json.loads(p.stdout)["sites"]
            if not s["total"]:
                continue
            totals["with_sites"] += 1
            totals["sites"] += s["total"]
            totals["applied"] += s["applied"]
            for k in s["kernels"]:
                if "not_in_place" in k:
                    # the kind of reason, without the site
                    why = k["not_in_place"].split("): ", 1)[-1]
                    if why.startswith("its body at "):
                        why = "its body is out of a branch's reach"
                    not_in_place[why] = not_in_place.get(why, 0) + 1
                for site in k["sites"]:
                    if "refused" in site:
                        refusals[site["refused"]] = refusals.get(
                            site["refused"], 0) + 1
                    else:
                        how = site["applied"]
                        if "gateway" in site:
                            how += "+gateway"
                        placed[how] = placed.get(how, 0) + 1
            steps = [
                ([a.tool, "-passes=patch-insns<%s>,verify" % a.rule, obj,
                  "-o", out], "patch"),
                ([a.tool, "-passes=patch-insns<%s>" % a.rule, out, "-o",
                  again], "rerun"),
                (["cmp", "-s", out, again], "fixed point"),
            ]
            if s["applied"]:
                steps += [
                    ([a.tool, "-passes=restore", out, "-o", back], "restore"),
                    (["cmp", "-s", obj, back], "restored exactly"),
                ]
            else:  # nothing applied: nothing changed
                steps.append((["cmp", "-s", obj, out], "unchanged"))
            ok = True
            for cmd, what in steps:
                r = run(cmd)
                if r.returncode:
                    print("FAIL %s %s: %s" % (what, obj, r.stderr.strip()[:300]))
                    ok = False
                    break
            totals["failures"] += not ok
            print("%s: %d sites, %d applied%s" % (
                os.path.basename(obj), s["total"], s["applied"],
                "" if ok else " (FAILED)"))
            sys.stdout.flush()
    print("summary: %(objects)d objects, %(with_sites)d with sites, "
          "%(sites)d sites, %(applied)d applied, %(failures)d failures" % totals)
    for how, n in sorted(placed.items()):
        print("applied: %d %s" % (n, {
            "site": "in place, the site branching to its body",
            "site+gateway": "in place, through a gateway",
            "clone": "in the kernel's copy"}[how]))
    for why, n in sorted(not_in_place.items(), key=lambda x: -x[1]):
        print("kernels copied, not in place: %d %s" % (n, why))
    for why, n in sorted(refusals.items(), key=lambda x: -x[1]):
        print("refused: %d %s" % (n, why))
    return 1 if totals["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
