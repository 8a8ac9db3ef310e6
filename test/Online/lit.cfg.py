# -*- Python -*-
# The online suite: tests of Debian's real HIP libraries (librocrand1,
# rocRAND 5.3.3), which download the package. A suite of its own so that
# `lit build/test` needs no network; utils/check.sh runs both (this one as
# `lit build/test/Online`) and counts both.
#
# Everything of test/lit.cfg.py applies (tools, %fatbin, %rewrite_host,
# features), plus:
#   %fetch_deb   Inputs/fetch-deb.py: downloads a Debian package once into a
#                cache under this build directory and extracts it
#   %swap_pairs_every  N of swap-rocsparse.test: it swaps every N-th of the
#                742 pairs (default 10, a sample that keeps CI short); the
#                whole sweep is `lit --param swap-pairs-every=1 ...`
#
# Feature 'debian-archive': apt knows librocrand1 (apt-get download
# --print-uris) and its archive answers (or the cache already holds the
# package). Every test here requires it: without it they are skipped, which
# in CI (utils/check.sh with CI=true) is a failure.
import os
import subprocess
import sys
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
lit_config.load_config(config, os.path.join(os.path.dirname(here), "lit.cfg.py"))

config.name = "hotswap-opt-online"
config.test_source_root = here
config.test_exec_root = os.path.join(config.hotswap_obj_root, "test", "Online")
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]

deb_cache = os.path.join(config.hotswap_obj_root, "test", "Online", "deb-cache")
config.substitutions.insert(
    0, ("%fetch_deb", '"%s" "%s" --cache "%s"'
        % (sys.executable, os.path.join(here, "Inputs", "fetch-deb.py"), deb_cache)))

every = lit_config.params.get("swap-pairs-every", "10")
if not every.isdigit() or int(every) < 1:
    lit_config.fatal("--param swap-pairs-every=%s: a whole number >= 1 is needed" % every)
config.substitutions.insert(0, ("%swap_pairs_every", every))


def debian_archive_reachable():
    if os.path.isdir(deb_cache) and any(
            f.startswith("librocrand1_") and f.endswith(".deb") for f in os.listdir(deb_cache)):
        return True
    try:
        r = subprocess.run(["apt-get", "download", "--print-uris", "librocrand1"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True, timeout=30)
    except Exception:
        return False
    uris = [w.strip("'") for w in r.stdout.split() if w.startswith("'")]
    if r.returncode != 0 or not uris:
        return False
    if not uris[0].startswith(("http://", "https://")):
        return True  # a local mirror (file:, cdrom:): nothing to probe
    try:
        req = urllib.request.Request(uris[0], method="HEAD")
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status == 200
    except Exception:
        return False


if debian_archive_reachable():
    config.available_features.add("debian-archive")
