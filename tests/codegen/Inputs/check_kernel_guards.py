#!/usr/bin/env python3
"""check_kernel_guards.py -- the three places of the nvrtc target that name a
kernel by its K_INDEX agree.

    check_kernel_guards.py MODULE.c

MODULE.c is fusec's --target=nvrtc output.  fusert compiles kernel i alone
with -DFUSERT_KERNEL=i and then asks the module for fusec_kernel_names[i],
and the launch stub of that kernel passes i to FUSEC_LAUNCH; so for every i:

  - the embedded source guards exactly one __global__ with
    `#if !defined(FUSERT_KERNEL) || FUSERT_KERNEL == i`, right above it,
  - that __global__ is named fusec_kernel_names[i],
  - every FUSEC_LAUNCH(i, SYMBOL, ...), FUSEC_CLUSTER_WIDTH(i, SYMBOL, ...)
    and FZK_BLOCKS_PER_SM(i, SYMBOL, ...) has SYMBOL ==
    fusec_kernel_names[i],
  - and no __global__ is left unguarded (it would be compiled into every
    per-kernel module).

Prints "kernel guards ok: N kernels" or the first disagreement (exit 1)."""
import ast
import re
import sys


def embedded_source(text):
    """The CUDA source: the adjacent string literals of fusec_source."""
    m = re.search(r"static const char fusec_source\[\] =\n(.*?)\n\s*;\n", text, re.S)
    if not m:
        sys.exit("check_kernel_guards: no fusec_source in the file")
    # C and Python agree on the escapes fusec uses (\n \t \" \\ and octal)
    return "".join(ast.literal_eval(line.strip()) for line in m.group(1).splitlines())


def main():
    text = open(sys.argv[1], encoding="ascii").read()
    names_m = re.search(r"fusec_kernel_names\[\] = \{(.*?)\};", text, re.S)
    names = re.findall(r'"([^"]+)"', names_m.group(1)) if names_m else []
    src = embedded_source(text).splitlines()
    guard_re = re.compile(r"#if !defined\(FUSERT_KERNEL\) \|\| FUSERT_KERNEL == (\d+)$")
    global_re = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\(\d+(?:, \d+)?\) )?(?:FZ_CLUSTER\(\d+\) )?(\w+)\(')
    guarded = {}
    for i, line in enumerate(src):
        g = global_re.match(line)
        if not g:
            if "__global__" in line:  # a kernel this script cannot read is a failure too
                sys.exit("check_kernel_guards: unexpected __global__ line: %s" % line)
            continue
        m = guard_re.match(src[i - 1]) if i else None
        if not m:
            sys.exit("check_kernel_guards: __global__ %s has no FUSERT_KERNEL guard" % g.group(1))
        k = int(m.group(1))
        if k in guarded:
            sys.exit("check_kernel_guards: index %d guards both %s and %s" % (k, guarded[k], g.group(1)))
        guarded[k] = g.group(1)
    if sorted(guarded) != list(range(len(names))):
        sys.exit("check_kernel_guards: guard indices %s, but %d kernel names" % (sorted(guarded), len(names)))
    for k, name in guarded.items():
        if names[k] != name:
            sys.exit("check_kernel_guards: index %d guards %s but fusec_kernel_names[%d] is %s"
                     % (k, name, k, names[k]))
    launches = re.findall(r"FUSEC_LAUNCH\((\d+), (\w+),", text)
    # the cluster width and occupancy queries name the kernel they ask about
    queries = re.findall(r"(?:FUSEC_CLUSTER_WIDTH|FZK_BLOCKS_PER_SM)\((\d+), (\w+),", text)
    for k, sym in launches + queries:
        if int(k) >= len(names) or names[int(k)] != sym:
            sys.exit("check_kernel_guards: FUSEC_LAUNCH, FUSEC_CLUSTER_WIDTH or FZK_BLOCKS_PER_SM(%s, %s) "
                     "disagrees with the name list" % (k, sym))
    if not launches and names:
        sys.exit("check_kernel_guards: no FUSEC_LAUNCH found")
    print("kernel guards ok: %d kernels, %d launches, %d queries" % (len(names), len(launches), len(queries)))


main()
