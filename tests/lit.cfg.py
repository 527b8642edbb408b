# lit configuration shared by every suite under tests/.
import os
import shutil
import subprocess

import lit.formats

config.name = "fusec"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".fuse", ".test", ".c"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]

site = lit_config.params.get("site")
if site and not getattr(config, "fusec_build_dir", None):
    lit_config.load_config(config, site)

config.test_source_root = os.path.dirname(__file__)
build = config.fusec_build_dir
config.test_exec_root = os.path.join(build, "tests")

path = [build, os.path.join(build, "runtime"), config.filecheck_dir,
        os.path.join(config.fusec_src_dir, "tools")]
config.environment["PATH"] = os.pathsep.join(path + [config.environment.get("PATH", os.environ.get("PATH", ""))])
for var in ("HOME", "TMPDIR", "CUDA_PATH", "CUDA_HOME", "LD_LIBRARY_PATH", "FUSERT_CACHE_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["NO_COLOR"] = "1"
if getattr(config, "sanitize", "OFF") in ("ON", "1", "TRUE"):
    # allocator_may_return_null: a huge allocation must come back as NULL so that
    # fusec reports it as an error, as it does without the sanitizer.
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:allocator_may_return_null=1"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    config.available_features.add("sanitize")

config.substitutions.append(("%fusec", os.path.join(build, "fusec")))
config.substitutions.append(("%srcroot", config.fusec_src_dir))
config.substitutions.append(("%builddir", build))
# lit itself, for tests that run lit on another suite (examples/golden)
config.substitutions.append(("%lit", getattr(config, "lit_executable", "") or "lit"))
config.substitutions.append(("%examples", os.path.join(config.fusec_src_dir, "examples")))
config.substitutions.append(("%python", shutil.which("python3") or "python3"))

# Features: what this machine can do.
if shutil.which("nvcc"):
    config.available_features.add("nvcc")
if shutil.which("ninja"):
    config.available_features.add("ninja")
if os.path.exists(os.path.join(build, "nvrtc-check")):
    config.available_features.add("nvrtc")  # tests/codegen/Inputs/nvrtc_check.c
def has_gpu():
    if os.environ.get("FUSEC_NO_GPU"):
        return False
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
        return out.returncode == 0 and "GPU" in out.stdout
    except Exception:
        return False
if has_gpu():
    config.available_features.add("cuda-gpu")
try:
    import numpy  # noqa: F401
    config.available_features.add("numpy")
except ImportError:
    pass
# tools/valgrind-lit.sh runs the suites again from a shadow build folder
# whose fusec runs under memcheck: slow suites opt out with UNSUPPORTED.
if os.path.basename(os.path.normpath(build)) == "valgrind":
    config.available_features.add("under-valgrind")
if shutil.which("valgrind"):
    config.available_features.add("valgrind")
# The quick loop (tools/test.sh --quick sets FUSEC_TEST_QUICK=1; or lit
# --param quick=1): tests that spend their time in nvcc, NVRTC or long
# emulator runs say `UNSUPPORTED: quick`; each stage keeps faster tests.
if lit_config.params.get("quick", os.environ.get("FUSEC_TEST_QUICK", "")) not in ("", "0"):
    config.available_features.add("quick")
