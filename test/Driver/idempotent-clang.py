"""Second runs of each pipeline are skips with identical bytes (clang-built inputs)."""
import subprocess
import sys

out, src, clang, lld, tool = sys.argv[1:6]
pipelines = ["trampoline", "trampoline,stub-syms", "realign-shdrs",
             "trampoline,stub-syms,realign-shdrs,verify"]
checked = 0
failed = 0


def run(pipeline, inp, res):
    p = subprocess.run([tool, "-passes=" + pipeline, "-debug-pass-manager", inp, "-o", res],
                       stderr=subprocess.PIPE, text=True, check=True)
    return p.stderr


def check_second(pipeline, first, tag):
    global checked, failed
    second = first + ".2"
    log = run(pipeline, first, second)
    checked += 1
    if open(first, "rb").read() != open(second, "rb").read():
        print("FAIL: %s: second run of %s changed the bytes" % (tag, pipeline))
        failed += 1
    ran = [l for l in log.splitlines() if l.startswith("Running pass:") and "verify" not in l]
    if ran:
        print("FAIL: %s: second run of %s ran %s" % (tag, pipeline, ran))
        failed += 1


for target in ["gfx900", "gfx90a", "gfx1100"]:
    o = "%s/%s.o" % (out, target)
    so = "%s/%s.so" % (out, target)
    subprocess.check_call([clang, "--target=amdgcn-amd-amdhsa", "-mcpu=" + target, "-nogpulib",
                           "-O2", "-c", src, "-o", o])
    subprocess.check_call([lld, "-shared", o, "-o", so])
    for i, pipeline in enumerate(pipelines):
        first = "%s/%s.%d" % (out, target, i)
        run(pipeline, so, first)
        check_second(pipeline, first, target)
    # stub-syms alone on a trampolined object.
    t = "%s/%s.t" % (out, target)
    run("trampoline", so, t)
    run("stub-syms", t, t + ".s")
    check_second("stub-syms", t + ".s", target)
    # realign-shdrs on the relocatable object too (trampoline needs ET_DYN).
    run("realign-shdrs", o, o + ".r")
    check_second("realign-shdrs", o + ".r", target + ".o")
print("checked %d second runs" % checked)
sys.exit(1 if failed else 0)
