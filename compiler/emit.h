/* emit.h -- code generation: CUDA kernels (compiler/cuda/) and host code
 * and header (emit_host.c) for both targets. */
#ifndef FUSEC_EMIT_H
#define FUSEC_EMIT_H
#include "fusion.h"
#include "util.h"

typedef enum { TARGET_CUDA, TARGET_NVRTC } Target;

/* The lowering of a module's kernels (emit_cuda_lower). */
typedef struct CudaModule CudaModule;

typedef struct EmitOptions {
    Target target;
    const char *module;      /* C identifier for the module (from the file name) */
    const char *header_name; /* what the source #includes, e.g. "softmax.h" */
    const char *source_name; /* the .fuse path, for comments */
    int fast_math;
    int atomic_reduce;       /* --atomic-reduce: atomic combine where it applies */
    const CudaModule *cuda;  /* emit_cuda_lower of the plans being emitted, with
                              * the same atomic_reduce; every emit_cuda_* and
                              * emit_host_source reads it (required) */
} EmitOptions;

/* How a kernel combines the partial results that several blocks computed
 * for the same reduction (compiler/cuda/schedule.c):
 *   COMBINE_NONE     no reduction (loop kernels);
 *   COMBINE_ORDERED  the default: each block writes its partial to scratch
 *                    and the block that takes the last ticket combines them
 *                    in block order (bitwise reproducible), or there are no
 *                    cross-block partials at all (one block per row);
 *   COMBINE_ATOMIC   --atomic-reduce, for full reductions and split column
 *                    reductions whose every reduction is sum, mean, max or
 *                    min: each block adds (or maxes) its partial into one
 *                    accumulator with an atomic, and the last block reads
 *                    it.  Within tolerance, not bitwise reproducible.
 */
typedef enum { COMBINE_NONE, COMBINE_ORDERED, COMBINE_ATOMIC } Combine;

/* Lower every kernel of plans[0..nplans) once: its variants (the
 * __global__ functions and their K_INDEX), combine mode, vector widths
 * and what its launch decides.  The kernel source, the name list, the
 * launch stubs and the fusion report all read this one value.  The plans
 * must outlive it; emit_cuda_module_free frees it. */
CudaModule *emit_cuda_lower(Plan **plans, int nplans, int atomic_reduce);
void emit_cuda_module_free(CudaModule *m);
/* The combine mode of kernel ki of plans[p].  With atomic_reduce set and an
 * ORDERED result, *why (when why is not NULL) is one short reason, e.g.
 * "var %7 has a three-word Welford state", else "". */
Combine emit_cuda_combine(const CudaModule *m, int p, int ki, const char **why);

/* The CUDA source of every kernel of every plan (device code only; no host
 * code, no heavy includes, so NVRTC compiles it fast). */
void emit_cuda_kernels(Buf *out, Plan **plans, int nplans, const EmitOptions *o);

/* Host-side launch stubs, one per kernel, written by compiler/cuda/ after the
 * kernels (the .cu) or outside the embedded source (the nvrtc .c).  The text
 * is valid both as C11 and as CUDA C++.  For kernel k of fn F:
 *
 *   static size_t <k.name>_scratch_bytes(const int64_t *dims);
 *       device scratch the kernel needs (partials, counters); 0 if none.
 *   static size_t <k.name>_scratch_zero_bytes(const int64_t *dims);
 *       (reduce kernels) how much of it, from the start, must be all zero
 *       when the kernel starts: ticket counters and atomic accumulators,
 *       which the kernel leaves all zero again.
 *   static fusert_status <k.name>_launch(void *const *bufs, const double *scalars,
 *                                         const int64_t *dims, void *scratch,
 *                                         void *zscratch, int sm_count,
 *                                         fusert_stream stream);
 *       scratch: the kernel's scratch_bytes; zscratch: memory of
 *             scratch_zero_bytes that is all zero, which the kernel uses in
 *             place of the start of scratch (the runtime's per-stream zeroed
 *             scratch, or scratch itself after a memset);
 *       bufs: device pointers of k.inputs[0..ninputs) (tensor params or
 *             intermediates; scalar params are not in bufs), then
 *             k.outputs[0..noutputs);
 *       scalars: F's scalar params by param index (IrFunc.params order;
 *             entries of tensor params unused), as double;
 *       dims: every sym of F (IrFunc.syms order), static ones filled in.
 *       The stub picks the variant (int32/int64 index, size bucket, vector
 *       width), computes grid and block, and launches with the macro
 *         FUSEC_LAUNCH(K_INDEX, KERNEL_SYMBOL, gx, gy, gz, bx, by, bz,
 *                      shared_bytes, stream, args)
 *       (args: void *args[] of pointers to the kernel arguments; K_INDEX:
 *       index of the variant's __global__ function in the module's kernel
 *       name list, emitted by emit_cuda_kernel_names), which emit_host.c
 *       defines per target and which evaluates to a fusert_status.
 * emit_cuda_kernel_names writes the C initialiser list of every
 * __global__ name in the module in K_INDEX order:  "a", "b", ...        */
void emit_cuda_launchers(Buf *out, Plan **plans, int nplans, const EmitOptions *o);
void emit_cuda_kernel_names(Buf *out, Plan **plans, int nplans, const EmitOptions *o);

/* The main output: a .cu (TARGET_CUDA) or a .c (TARGET_NVRTC) with the
 * host functions, and the header declaring them. */
void emit_host_source(Buf *out, Plan **plans, int nplans, const EmitOptions *o);
void emit_header(Buf *out, Plan **plans, int nplans, const EmitOptions *o);

/* The host API (the header emit_header writes), for fn NAME:
 *
 *   fusert_status NAME(<params>, <results>, <dims>, fusert_stream stream);
 *     params in declared order: a tensor is `const T *` (device pointer),
 *       a scalar is passed by value (f16/bf16 scalars as float);
 *     results in declared order: `T *` (a scalar result: 1-element buffer);
 *     dims: int64_t for each symbolic dim, in order of first appearance
 *       (IrFunc.syms; dims made static by -D are not passed);
 *     T: float, double, int32_t, int64_t, bool, and uint16_t for f16/bf16.
 *   fusert_status NAME_ws(<same>, void *workspace, size_t workspace_bytes,
 *                         fusert_stream stream);   intermediates from the caller
 *   size_t NAME_workspace_size(<dims>);           bytes NAME_ws needs
 *   fusert_status NAME_packed(void *const *buffers, const double *scalars,
 *                             const int64_t *dims, fusert_stream stream);
 *     the generic entry for tools (fuse-run, benchmarks, ctypes):
 *     buffers = tensor params then results (device pointers), scalars =
 *     scalar params in order, dims = EVERY sym of IrFunc.syms in order,
 *     those made static by -D included (checked against their size).
 *   int NAME_kernel_count(void);                  kernels per call
 * Without a workspace, intermediates and scratch live in the runtime's
 * region of the stream (fusert_stream_scratch), or, where it has none, in
 * stream-ordered memory allocated and freed by the call.
 * Every entry checks null pointers, negative dims and dims that disagree
 * with static sizes, and returns a status with a message
 * (fusert_last_error()).  Zero-size dims are valid and launch nothing
 * (reductions over an empty axis still write their identity). */

#endif
