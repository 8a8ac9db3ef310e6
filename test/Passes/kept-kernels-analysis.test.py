"""Compares print<kernels> (JSON) right after synth-trampolines and after
patch-descriptors (passes that keep the analysis up to date) in the same
pipeline with print<kernels> of the object that pipeline wrote; and checks
that the same pipeline run on that object changes nothing."""
import os
import subprocess
import sys

out, clang, lld, tool = sys.argv[1:5]
src = os.path.join(os.path.dirname(__file__), "..", "Inputs", "two-kernels.cl")
preload = ["-mllvm", "-amdgpu-kernarg-preload-count=2"]
configs = [("gfx90a", []), ("gfx90a", preload), ("gfx950", preload),
           ("gfx1100", [])]
checked = 0
failed = 0
for mcpu, extra in configs:
    tag = mcpu + ("-preload" if extra else "")
    o = os.path.join(out, tag + ".o")
    so = os.path.join(out, tag + ".so")
    subprocess.check_call([clang, "--target=amdgcn-amd-amdhsa", "-mcpu=" + mcpu,
                           "-nogpulib", "-O2", "-c", src, "-o", o] + extra)
    subprocess.check_call([lld, "-shared", o, "-o", so])
    for form, passes in [(f, p) for f in ("auto", "long")
                         for p in ("synth-trampolines", "synth-trampolines,patch-descriptors")]:
        res = os.path.join(out, tag + "-" + form + "-" + str(len(passes)) + ".co")
        pipeline = passes.replace("synth-trampolines",
                                  "synth-trampolines<form=%s>" % form) + ",print<kernels>"
        kept = subprocess.check_output(
            [tool, "-passes=" + pipeline, "--kernels-format=json", so,
             "-o", res])
        fresh = subprocess.check_output(
            [tool, "-passes=print<kernels>", "--kernels-format=json", res,
             "-disable-output"])
        again = res + ".again"
        subprocess.check_call([tool, "-passes=" + pipeline, res, "-o", again],
                              stdout=subprocess.DEVNULL)
        with open(res, "rb") as f, open(again, "rb") as g:
            idempotent = f.read() == g.read()
        if b'"stub"' not in kept and b'"pending_stub"' not in kept:
            print("FAIL: %s form=%s: no kernel entered through a stub"
                  % (tag, form))
            failed += 1
        elif not idempotent:
            print("FAIL: %s form=%s: a second run changed the output"
                  % (tag, form))
            failed += 1
        elif kept != fresh:
            print("FAIL: %s form=%s: kept analysis differs from a fresh one"
                  % (tag, form))
            print(kept.decode())
            print(fresh.decode())
            failed += 1
        checked += 1
print("kept results checked:", checked)
sys.exit(1 if failed else 0)
