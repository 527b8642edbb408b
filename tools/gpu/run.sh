#!/usr/bin/env bash
# tools/gpu/run.sh -- the GPU checks, run on a machine with a GPU from a
# build made elsewhere (the GPU image has no flex or bison).
#
#   tools/gpu/run.sh BUILD_DIR [lit args...]
#
# BUILD_DIR holds fusec and runtime/libfusert built on the development
# machine.  When the GPU machine lacks lit or FileCheck, FUSEC_GPU_TOOLS names
# a folder that carries them (default: the checkout's .gpu folder): bin/
# (FileCheck), lib/ (its libraries) and lit/lit.py.  The lit site config is rewritten for this checkout's location,
# then tests/gpu runs.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd); shift
tools_dir=${FUSEC_GPU_TOOLS:-$root/.gpu}
if [ -d "$tools_dir" ]; then
  export PATH="$tools_dir/bin:$PATH"
  export LD_LIBRARY_PATH="$tools_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
lit="$tools_dir/lit/lit.py"
[ -f "$lit" ] || lit=$(command -v lit || command -v llvm-lit)
filecheck=$(command -v FileCheck)
mkdir -p "$build/tests"
cat > "$build/tests/lit.site.cfg.py" <<CFG
config.fusec_build_dir = "$build"
config.fusec_src_dir = "$root"
config.filecheck_dir = "$(dirname "$filecheck")"
config.sanitize = "OFF"
lit_config.load_config(config, "$root/tests/lit.cfg.py")
CFG
exec python3 "$lit" --param site="$build/tests/lit.site.cfg.py" "$@" "$root/tests/gpu"
