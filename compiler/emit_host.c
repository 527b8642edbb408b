/* emit_host.c -- the host side of the generated source: the entry
 * functions of both targets (emit_header.c writes their declarations).
 *
 * Design note.  Every fn becomes five extern functions (emit.h: NAME,
 * NAME_ws, NAME_workspace_size, NAME_packed, NAME_kernel_count) and three
 * static helpers:
 *
 *   NAME_layout(dims, off)  byte offsets of every intermediate and of the
 *                           scratch of every kernel in one block (256-byte
 *                           aligned pieces, intermediates first, then the
 *                           scratch, whose counters are zero-filled per call);
 *                           returns the block size, SIZE_MAX on overflow.
 *   NAME_check(...)         dims >= 0, device pointers non-NULL (NULL is
 *                           accepted for a tensor with no elements).
 *   NAME_run(...)           allocate (or carve the caller's workspace), zero
 *                           the counters, call the launch stubs of compiler/cuda
 *                           in plan order, free.
 *
 * The typed entries pack their arguments into the three arrays the launch
 * stubs take (bufs by kernel, scalars by param index, dims by sym with the
 * static ones filled in); NAME_packed checks and calls NAME_run too.  A kernel
 * whose outputs are all empty is skipped; any other kernel is launched even
 * when its input is empty (a reduction over an empty axis writes identities:
 * the stub decides).
 *
 * What differs by target is only the support block before the stubs:
 * FUSEC_LAUNCH and four small helpers (sm count, alloc, free, memset) over
 * the CUDA runtime (.cu for nvcc) or over fusert (plain C11 with the CUDA
 * source embedded as a string for NVRTC).  Both targets link libfusert: the
 * cuda target uses it only for fusert_set_error/fusert_last_error, so that
 * the header and the error API are the same for both.
 *
 * The C names and types come from emit_host_common.c, as the header's do.
 * Output is a pure function of the plans and options: byte-stable.
 */
#include "emit_host_common.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Block pieces are aligned like cudaMalloc'd memory, so every vector load
 * of a kernel that is aligned for a fresh allocation is aligned here too. */
#define HOST_ALIGN 256
/* Longest piece of one string literal of the embedded source (C99 5.2.4.1
 * allows 4095 characters; escapes can double a line, so stay well below). */
#define HOST_MAX_PIECE 1800

/* ---- sizes ------------------------------------------------------------------ */

/* One dim of a shape as a C expression over `dims`. */
static void put_dim(Buf *b, IrDim d)
{
    if (d.size >= 0)
        buf_printf(b, "%lld", (long long)d.size);
    else
        buf_printf(b, "dims[%d]", d.sym);
}

/* Bytes of a value: "fusec_mul(fusec_mul(4, dims[0]), dims[1])", folded for
 * static dims; SIZE_MAX at run time when it overflows. */
static void put_bytes(Buf *b, DType t, const IrShape *s)
{
    int64_t stat = dtype_size(t);
    int nsym = 0;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i].size >= 0) {
            if (s->dims[i].size != 0 && stat > INT64_MAX / s->dims[i].size)
                stat = -1; /* overflows even statically: fold at run time */
            else if (stat >= 0)
                stat *= s->dims[i].size;
        } else {
            nsym++;
        }
    }
    if (stat < 0) {
        /* keep every factor symbolic-style so fusec_mul saturates */
        for (int i = 0; i < s->rank; i++)
            buf_puts(b, "fusec_mul(");
        buf_printf(b, "(size_t)%d", dtype_size(t));
        for (int i = 0; i < s->rank; i++) {
            buf_puts(b, ", ");
            put_dim(b, s->dims[i]);
            buf_putc(b, ')');
        }
        return;
    }
    for (int i = 0; i < nsym; i++)
        buf_puts(b, "fusec_mul(");
    buf_printf(b, "(size_t)%lld", (long long)stat);
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i].size < 0)
            buf_printf(b, ", dims[%d])", s->dims[i].sym);
}

/* A C condition that holds when a value of shape s has elements, or NULL
 * when it always has (static, non-zero), or "0" when it never has. */
static const char *nonempty_cond(Arena *a, const IrShape *s)
{
    Buf b = {0};
    int n = 0;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i].size == 0) {
            buf_free(&b);
            return "0";
        }
        if (s->dims[i].size < 0) {
            buf_printf(&b, "%sdims[%d] != 0", n++ ? " && " : "", s->dims[i].sym);
        }
    }
    const char *r = n ? arena_strndup(a, b.data, b.len) : NULL;
    buf_free(&b);
    return r;
}

/* ---- the embedded CUDA source (nvrtc target) ------------------------------- */

/* src as adjacent C string literals, one per source line (split further
 * when long), escaped so that no trigraph or non-ASCII byte survives. */
/* Why the care: gcc -std=c11 honours trigraphs ("??=" would become '#'),
 * non-ASCII bytes would depend on the compiler's source charset, and long
 * lines hit translation limits.  Readers still see the kernel line by line. */
static void put_c_string(Buf *out, const char *src, size_t len)
{
    size_t i = 0;
    if (len == 0) {
        buf_puts(out, "    \"\"\n");
        return;
    }
    while (i < len) {
        size_t piece = 0;
        buf_puts(out, "    \"");
        while (i < len) {
            unsigned char c = (unsigned char)src[i++];
            if (c == '\n') {
                buf_puts(out, "\\n");
                break;
            }
            if (c == '\\' || c == '"') {
                buf_putc(out, '\\');
                buf_putc(out, (char)c);
            } else if (c == '\t') {
                buf_puts(out, "\\t");
            } else if (c == '?' && i < len && src[i] == '?') {
                buf_puts(out, "?\\"); /* no trigraphs: ?\? */
            } else if (c < 0x20 || c >= 0x7f) {
                buf_printf(out, "\\%03o", c);
            } else {
                buf_putc(out, (char)c);
            }
            if (++piece >= HOST_MAX_PIECE && i < len && src[i] != '\n')
                break;
        }
        buf_puts(out, "\"\n");
    }
}

/* ---- the target support block ------------------------------------------------ */

/* Saturating size arithmetic and block carving, shared by both targets.
 * Every helper is static and may be unused in a given module, hence
 * FUSEC_MAYBE_UNUSED (generated code must compile under -Werror). */
static void emit_common_helpers(Emitter *e)
{
    emit_line(e, "#if defined(__GNUC__)");
    emit_line(e, "#define FUSEC_MAYBE_UNUSED __attribute__((unused))");
    emit_line(e, "#else");
    emit_line(e, "#define FUSEC_MAYBE_UNUSED");
    emit_line(e, "#endif");
    emit_line(e, "%s", "");
    emit_line(e, "/* Sizes in bytes saturate at SIZE_MAX, which no allocation can meet. */");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED size_t fusec_mul(size_t a, int64_t b)\n{");
    emit_line(e, "if (b < 0 || a == SIZE_MAX || (b != 0 && a > SIZE_MAX / (uint64_t)b))");
    emit_line(e, "    return SIZE_MAX;");
    emit_line(e, "return a * (size_t)b;");
    emit_close(e, "%s", "}");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED size_t fusec_add(size_t a, size_t b)\n{");
    emit_line(e, "return a > SIZE_MAX - b ? SIZE_MAX : a + b;");
    emit_close(e, "%s", "}");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED size_t fusec_align(size_t a)\n{");
    emit_line(e, "return a > SIZE_MAX - %d ? SIZE_MAX : (a + %d) & ~(size_t)%d;", HOST_ALIGN - 1,
              HOST_ALIGN - 1, HOST_ALIGN - 1);
    emit_close(e, "%s", "}");
    emit_line(e, "/* A piece of the block; NULL when there is no block (nothing needed). */");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED void *fusec_piece(void *block, size_t off)\n{");
    emit_line(e, "return block ? (void *)((char *)block + off) : NULL;");
    emit_close(e, "%s", "}");
}

/* The cuda target's FUSEC_LAUNCH and helpers over the CUDA runtime.  Each
 * CUDA error is cleared (cudaGetLastError) once reported, so that it does
 * not resurface in the caller's next CUDA call, and becomes a fusert status
 * with a message naming the fn or kernel. */
static void emit_cuda_support(Emitter *e, Arena *a, const char *names, const char *module)
{
    emit_line(e, "/* ==== host support: the CUDA runtime ==== */");
    emit_line(e, "%s", "");
    emit_line(e, "/* Kernel names in K_INDEX order, for messages. */");
    host_wrapped(e, arena_printf(a, "static const char *const fusec_kernel_names[] = {%s};", *names ? names : "NULL"));
    emit_line(e, "%s", "");
    emit_common_helpers(e);
    emit_line(e, "%s", "");
    emit_line(e, "#define FUSEC_LAUNCH(K_INDEX, KERNEL_SYMBOL, gx, gy, gz, bx, by, bz, shared_bytes, \\");
    emit_line(e, "                     stream, args) \\");
    emit_line(e, "    fusec_launch((K_INDEX), (const void *)(KERNEL_SYMBOL), (unsigned)(gx), (unsigned)(gy), \\");
    emit_line(e, "                 (unsigned)(gz), (unsigned)(bx), (unsigned)(by), (unsigned)(bz), \\");
    emit_line(e, "                 (size_t)(shared_bytes), (stream), (args))");
    emit_line(e, "%s", "");
    emit_line(e, "/* Launch kernel `fn`; a failure becomes FUSERT_ERROR_LAUNCH with the");
    emit_line(e, " * kernel's name and CUDA's words for it (the CUDA error is cleared). */");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_launch(int k, const void *fn, unsigned gx, "
                 "unsigned gy,\n        unsigned gz, unsigned bx, unsigned by, unsigned bz, size_t shared_bytes,\n"
                 "        fusert_stream stream, void **args)\n{");
    emit_line(e, "cudaError_t err = cudaSuccess;");
    emit_line(e, "/* by default a kernel takes at most 48 KiB less its static shared memory");
    emit_line(e, " * dynamically, so any dynamic shared memory is opted in to first */");
    emit_line(e, "if (shared_bytes > 0)");
    emit_line(e, "    err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,");
    emit_line(e, "                               (int)shared_bytes);");
    emit_line(e, "if (err == cudaSuccess)");
    emit_line(e, "    err = cudaLaunchKernel(fn, dim3(gx, gy, gz), dim3(bx, by, bz), args, shared_bytes,");
    emit_line(e, "                           (cudaStream_t)stream);");
    emit_line(e, "if (err == cudaSuccess)");
    emit_line(e, "    return FUSERT_SUCCESS;");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "return fusert_set_error(FUSERT_ERROR_LAUNCH,");
    emit_line(e, "                        \"%s: launch of kernel %%s (grid %%u x %%u x %%u, block %%u x %%u x %%u, \"", module);
    emit_line(e, "                        \"%%zu bytes of shared memory) failed: %%s\",");
    emit_line(e, "                        fusec_kernel_names[k], gx, gy, gz, bx, by, bz, shared_bytes,");
    emit_line(e, "                        cudaGetErrorString(err));");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The cluster width a kernel was built with: 0 where the binary's");
    emit_line(e, " * architecture has no clusters (before sm_90) or the runtime cannot say. */");
    emit_line(e, "#define FUSEC_CLUSTER_WIDTH(K_INDEX, KERNEL_SYMBOL, width) \\");
    emit_line(e, "    fusec_cluster_width((const void *)(KERNEL_SYMBOL), (width))");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_cluster_width(const void *fn, int *width)\n{");
    emit_line(e, "cudaFuncAttributes attr;");
    emit_line(e, "*width = 0;");
    emit_open(e, "%s", "if (cudaFuncGetAttributes(&attr, fn) != cudaSuccess) {");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "%s", "}");
    emit_line(e, "*width = attr.requiredClusterWidth;");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "static fusert_status fusec_cuda_error(cudaError_t err, const char *fn, const char *what)");
    emit_open(e, "%s", "{");
    emit_line(e, "fusert_status s = FUSERT_ERROR_CUDA;");
    emit_line(e, "if (err == cudaErrorMemoryAllocation)");
    emit_line(e, "    s = FUSERT_ERROR_OUT_OF_MEMORY;");
    emit_line(e, "else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)");
    emit_line(e, "    s = FUSERT_ERROR_NO_DEVICE;");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "return fusert_set_error(s, \"%%s: %%s: %%s\", fn, what, cudaGetErrorString(err));");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* Attribute a of device dev, cached per device in cache[dev] (atomic:");
    emit_line(e, " * threads may race to store the same value; 0: not asked yet). */");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED cudaError_t fusec_device_attr(std::atomic<int> *cache, cudaDeviceAttr a, int dev,\n"
                 "        int *out)\n{");
    emit_line(e, "int n = dev >= 0 && dev < FUSERT_MAX_DEVICES ? cache[dev].load(std::memory_order_relaxed) : 0;");
    emit_open(e, "%s", "if (n <= 0) {");
    emit_line(e, "cudaError_t err = cudaDeviceGetAttribute(&n, a, dev);");
    emit_line(e, "if (err != cudaSuccess)");
    emit_line(e, "    return err;");
    emit_line(e, "if (dev >= 0 && dev < FUSERT_MAX_DEVICES)");
    emit_line(e, "    cache[dev].store(n, std::memory_order_relaxed);");
    emit_close(e, "%s", "}");
    emit_line(e, "*out = n;");
    emit_line(e, "return cudaSuccess;");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* Multiprocessor count of the current device. */");
    emit_line(e, "static std::atomic<int> fusec_sm_cache[FUSERT_MAX_DEVICES];");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_sm_count(const char *fn, int *count)\n{");
    emit_line(e, "int dev = 0;");
    emit_line(e, "cudaError_t err = cudaGetDevice(&dev);");
    emit_line(e, "if (err != cudaSuccess)");
    emit_line(e, "    return fusec_cuda_error(err, fn, \"no CUDA device\");");
    emit_line(e, "err = fusec_device_attr(fusec_sm_cache, cudaDevAttrMultiProcessorCount, dev, count);");
    emit_line(e, "if (err != cudaSuccess)");
    emit_line(e, "    return fusec_cuda_error(err, fn, \"cannot query the multiprocessor count\");");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* How many blocks of `block` threads of a kernel a multiprocessor holds");
    emit_line(e, " * at once (its registers, shared memory, launch bounds); 0 where the");
    emit_line(e, " * runtime cannot say. */");
    emit_line(e, "#define FUSEC_BLOCKS_PER_SM(K_INDEX, KERNEL_SYMBOL, block, n) \\");
    emit_line(e, "    fusec_blocks_per_sm((const void *)(KERNEL_SYMBOL), (block), (n))");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_blocks_per_sm(const void *fn, int block, int *n)\n{");
    emit_open(e, "%s", "if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, fn, block, 0) != cudaSuccess) {");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "*n = 0;");
    emit_close(e, "%s", "}");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The L2 cache size of the current device in bytes. */");
    emit_line(e, "#define FUSEC_L2_BYTES(bytes) fusec_l2_bytes(bytes)");
    emit_line(e, "static std::atomic<int> fusec_l2_cache[FUSERT_MAX_DEVICES];");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_l2_bytes(int *bytes)\n{");
    emit_line(e, "int dev = 0;");
    emit_line(e, "cudaError_t err = cudaGetDevice(&dev);");
    emit_line(e, "if (err == cudaSuccess)");
    emit_line(e, "    err = fusec_device_attr(fusec_l2_cache, cudaDevAttrL2CacheSize, dev, bytes);");
    emit_line(e, "if (err != cudaSuccess)");
    emit_line(e, "    return fusec_cuda_error(err, \"fusec\", \"cannot query the L2 cache size\");");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The most shared memory a block of the current device may opt in to;");
    emit_line(e, " * 0 where the runtime cannot say (no such launch). */");
    emit_line(e, "#define FUSEC_SMEM_OPTIN(bytes) fusec_smem_optin(bytes)");
    emit_line(e, "static std::atomic<int> fusec_smem_cache[FUSERT_MAX_DEVICES];");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_smem_optin(int *bytes)\n{");
    emit_line(e, "int dev = 0;");
    emit_line(e, "if (cudaGetDevice(&dev) != cudaSuccess ||");
    emit_open(e, "%s", "    fusec_device_attr(fusec_smem_cache, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev, bytes) != cudaSuccess) {");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "*bytes = 0;");
    emit_close(e, "%s", "}");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* Stream-ordered memory for intermediates and scratch. */");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_alloc(const char *fn, void **ptr, size_t bytes,\n"
                 "        fusert_stream stream)\n{");
    emit_line(e, "cudaError_t err = cudaMallocAsync(ptr, bytes, (cudaStream_t)stream);");
    emit_line(e, "if (err == cudaSuccess)");
    emit_line(e, "    return FUSERT_SUCCESS;");
    emit_line(e, "*ptr = NULL;");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "return fusert_set_error(err == cudaErrorMemoryAllocation ? FUSERT_ERROR_OUT_OF_MEMORY");
    emit_line(e, "                                                       : FUSERT_ERROR_CUDA,");
    emit_line(e, "                        \"%%s: cannot allocate %%zu bytes for intermediates: %%s\", fn, bytes,");
    emit_line(e, "                        cudaGetErrorString(err));");
    emit_close(e, "%s", "}");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_free(const char *fn, void *ptr, fusert_stream stream)\n{");
    emit_line(e, "cudaError_t err = cudaFreeAsync(ptr, (cudaStream_t)stream);");
    emit_line(e, "return err == cudaSuccess ? FUSERT_SUCCESS");
    emit_line(e, "                          : fusec_cuda_error(err, fn, \"cannot free the intermediates\");");
    emit_close(e, "%s", "}");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_zero(const char *fn, void *ptr, size_t bytes,\n"
                 "        fusert_stream stream)\n{");
    emit_line(e, "cudaError_t err = cudaMemsetAsync(ptr, 0, bytes, (cudaStream_t)stream);");
    emit_line(e, "return err == cudaSuccess ? FUSERT_SUCCESS");
    emit_line(e, "                          : fusec_cuda_error(err, fn, \"cannot zero the kernel scratch\");");
    emit_close(e, "%s", "}");
}

/* The nvrtc target's FUSEC_LAUNCH and helpers: everything goes through
 * fusert, which compiles fusec_source per kernel and device on the kernel's
 * first launch (.per_kernel: -DFUSERT_KERNEL=<K_INDEX> keeps the one
 * variant a launch picked, see emit_wrappers) and caches it on disk, finds
 * kernels by K_INDEX and records its own error messages. */
static void emit_nvrtc_support(Emitter *e, Arena *a, const char *names, int fast_math)
{
    emit_line(e, "/* ==== host support: fusert (NVRTC and the driver API) ==== */");
    emit_line(e, "%s", "");
    emit_line(e, "/* Kernel names in K_INDEX order. */");
    host_wrapped(e, arena_printf(a, "static const char *const fusec_kernel_names[] = {%s};", *names ? names : "NULL"));
    emit_line(e, "%s", "");
    emit_line(e, "/* The module: each kernel is compiled alone for the current device on its");
    emit_line(e, " * first launch, then cached. */");
    emit_open(e, "%s", "static fusert_program fusec_program = {");
    emit_line(e, ".name = fusec_module_name,");
    emit_line(e, ".source = fusec_source,");
    emit_line(e, ".kernels = fusec_kernel_names,");
    if (*names)
        emit_line(e, ".nkernels = (int)(sizeof fusec_kernel_names / sizeof fusec_kernel_names[0]),");
    else
        emit_line(e, ".nkernels = 0,");
    /* -minimal: NVRTC leaves out textures, the device runtime and the CUDA
     * runtime's types, none of which the source uses: the same CUBIN, byte
     * for byte, for each of the 672 kernels of the examples and the emulator
     * and GPU test inputs (NVRTC 13.0, sm_90; tools/bench/nvrtc_same_sass.py),
     * compiled 3-6% faster (docs/benchmarks.md, "JIT times"); fusert
     * drops it for an NVRTC before 12.4 */
    emit_line(e, ".options = %s,", fast_math ? "\"-minimal --use_fast_math\"" : "\"-minimal\"");
    emit_line(e, ".per_kernel = 1,");
    emit_close(e, "%s", "};");
    emit_line(e, "%s", "");
    emit_common_helpers(e);
    emit_line(e, "%s", "");
    emit_line(e, "/* The kernel symbol is not needed here: kernels are found by index. */");
    emit_line(e, "#define FUSEC_LAUNCH(K_INDEX, KERNEL_SYMBOL, gx, gy, gz, bx, by, bz, shared_bytes, \\");
    emit_line(e, "                     stream, args) \\");
    emit_line(e, "    fusec_launch((K_INDEX), (unsigned)(gx), (unsigned)(gy), (unsigned)(gz), (unsigned)(bx), \\");
    emit_line(e, "                 (unsigned)(by), (unsigned)(bz), (unsigned)(shared_bytes), (stream), (args))");
    emit_line(e, "%s", "");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_launch(int k, unsigned gx, unsigned gy, unsigned gz,\n"
                 "        unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes, fusert_stream stream,\n"
                 "        void **args)\n{");
    emit_line(e, "void *fn = NULL;");
    emit_line(e, "fusert_status st = fusert_program_kernel(&fusec_program, k, &fn);");
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    emit_line(e, "return fusert_launch(fn, gx, gy, gz, bx, by, bz, shared_bytes, stream, args);");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The cluster width kernel K_INDEX was built with (0: none), compiling it. */");
    emit_line(e, "#define FUSEC_CLUSTER_WIDTH(K_INDEX, KERNEL_SYMBOL, width) fusec_cluster_width((K_INDEX), (width))");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_cluster_width(int k, int *width)\n{");
    emit_line(e, "void *fn = NULL;");
    emit_line(e, "*width = 0;");
    emit_line(e, "fusert_status st = fusert_program_kernel(&fusec_program, k, &fn);");
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    emit_line(e, "return fusert_kernel_cluster_width(fn, width);");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* How many blocks of `block` threads of kernel K_INDEX a multiprocessor");
    emit_line(e, " * holds at once (0: the driver cannot say), compiling it. */");
    emit_line(e, "#define FUSEC_BLOCKS_PER_SM(K_INDEX, KERNEL_SYMBOL, block, n) fusec_blocks_per_sm((K_INDEX), (block), (n))");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_blocks_per_sm(int k, int block, int *n)\n{");
    emit_line(e, "void *fn = NULL;");
    emit_line(e, "*n = 0;");
    emit_line(e, "fusert_status st = fusert_program_kernel(&fusec_program, k, &fn);");
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    emit_line(e, "return fusert_kernel_blocks_per_sm(fn, block, 0, n);");
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The L2 cache size of the current device in bytes. */");
    emit_line(e, "#define FUSEC_L2_BYTES(bytes) fusert_device_l2_bytes(bytes)");
    emit_line(e, "%s", "");
    emit_line(e, "/* The most shared memory a block of the current device may opt in to. */");
    emit_line(e, "#define FUSEC_SMEM_OPTIN(bytes) fusert_device_shared_optin(bytes)");
    emit_line(e, "%s", "");
    emit_line(e, "/* fusert keeps the messages; these only fit the cuda target's shapes. */");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_sm_count(const char *fn, int *count)\n{");
    emit_line(e, "(void)fn;");
    emit_line(e, "return fusert_device_sm_count(count);");
    emit_close(e, "%s", "}");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_alloc(const char *fn, void **ptr, size_t bytes,\n"
                 "        fusert_stream stream)\n{");
    emit_line(e, "(void)fn;");
    emit_line(e, "return fusert_alloc_async(ptr, bytes, stream);");
    emit_close(e, "%s", "}");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_free(const char *fn, void *ptr, fusert_stream stream)\n{");
    emit_line(e, "(void)fn;");
    emit_line(e, "return fusert_free_async(ptr, stream);");
    emit_close(e, "%s", "}");
    emit_open(e, "%s", "static FUSEC_MAYBE_UNUSED fusert_status fusec_zero(const char *fn, void *ptr, size_t bytes,\n"
                 "        fusert_stream stream)\n{");
    emit_line(e, "(void)fn;");
    emit_line(e, "return fusert_memset_async(ptr, 0, bytes, stream);");
    emit_close(e, "%s", "}");
}

/* ---- entry functions ------------------------------------------------------------ */

/* The buffer expression of a kernel input or output inside NAME_run. */
static void put_buffer(Buf *b, const FnInfo *fi, IrNode *n, int is_output)
{
    const IrFunc *f = fi->fn;
    IrNode *s = host_storage_of(n);
    if (!is_output && s && s->op == OP_PARAM && s->param >= 0 && s->param < f->nparams &&
        fi->pbuf[s->param] >= 0) {
        buf_printf(b, "bufs[%d]", fi->pbuf[s->param]);
        return;
    }
    int r = s ? host_result_of(f, s) : -1;
    if (r >= 0) {
        buf_printf(b, "bufs[%d]", fi->ntensors + r);
        return;
    }
    int i = s ? host_inter_of(fi, s) : -1;
    if (i < 0)
        ICE(is_output ? "a kernel stores into a parameter" : "a kernel reads a value that no kernel stores");
    buf_printf(b, "fusec_piece(block, off[%d])", i);
}

/* How people know a value: its param or result name, its source name, or %id. */
static void value_name(Buf *b, const FnInfo *fi, IrNode *n)
{
    const IrFunc *f = fi->fn;
    IrNode *s = host_storage_of(n);
    int r = s ? host_result_of(f, s) : -1;
    if (s && s->op == OP_PARAM && s->param >= 0 && s->param < f->nparams)
        buf_puts(b, f->params[s->param].name);
    else if (r >= 0)
        buf_puts(b, f->results[r].name);
    else if (s && s->name)
        buf_puts(b, s->name);
    else
        buf_printf(b, "%%%d", s ? s->id : n->id);
}

static void value_comment(Buf *b, Arena *a, const FnInfo *fi, const IrNode *n)
{
    buf_printf(b, "%%%d", n->id);
    if (n->name)
        buf_printf(b, " %s", n->name);
    buf_printf(b, ": %s", host_type_text(a, fi->fn, n->dtype, &n->shape));
}

/* NAME_layout: the one place that decides where every piece of the block
 * lives, used by NAME_run (to carve) and NAME_workspace_size (to size), so
 * the two can never disagree.  Scratch comes last so that a single memset
 * zeroes what needs it: from its start to the end of the last kernel's
 * counters (NAME_scratch_zero_bytes). */
static void emit_layout(Emitter *e, Arena *a, const FnInfo *fi)
{
    const Plan *p = fi->plan;
    emit_line(e, "/* Offsets of the pieces of %s's block: %d intermediate%s, then the scratch",
              fi->name, fi->ninter, fi->ninter == 1 ? "" : "s");
    emit_line(e, " * of each kernel (off[%d] on; its counters zero-filled per call).  Returns the size. */",
              fi->ninter);
    emit_open(e, "%s", arena_printf(a, "static size_t %s_layout(const int64_t *dims, size_t *off)\n{",
                              fi->name));
    emit_line(e, "size_t at = 0;");
    emit_line(e, "(void)dims;");
    for (int i = 0; i < fi->ninter; i++) {
        Buf c = {0}, s = {0};
        value_comment(&c, a, fi, fi->inter[i]);
        DType md = fuse_mem_dtype(fi->fn, fi->inter[i]);
        if (md != fi->inter[i]->dtype)
            buf_printf(&c, ", kept as %s", dtype_name(md));
        put_bytes(&s, md, &fi->inter[i]->shape);
        emit_line(e, "off[%d] = at; /* %.*s */", i, (int)c.len, c.data);
        emit_line(e, "at = fusec_align(fusec_add(at, %.*s));", (int)s.len, s.data);
        buf_free(&c);
        buf_free(&s);
    }
    emit_line(e, "off[%d] = at; /* scratch */", fi->ninter);
    for (int k = 0; k < p->nkernels; k++) {
        emit_line(e, "off[%d] = at;", fi->ninter + 1 + k);
        emit_line(e, "at = fusec_align(fusec_add(at, %s_scratch_bytes(dims)));", p->kernels[k].name);
    }
    emit_line(e, "return at;");
    emit_close(e, "%s", "}");
}

/* argmax/argmin over an empty axis has no answer (docs/language.md; NumPy
 * raises too, and the interpreter reports it): the entry refuses such dims
 * with a status instead of writing an index that means nothing. */
static void emit_empty_arg_checks(Emitter *e, Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    for (int i = 0; i < f->nnodes; i++) {
        const IrNode *n = f->nodes[i];
        if ((n->op != OP_ARGMAX && n->op != OP_ARGMIN) || n->nin < 1)
            continue;
        const IrShape *in = &n->in[0].node->shape;
        Buf cond = {0}, what = {0};
        int never = 0, stat = 0;
        for (int d = 0; d < in->rank; d++) {
            if (!(n->axes & (1u << d)))
                continue;
            if (in->dims[d].size > 0)
                never = 1; /* a static, non-empty reduced dim */
            else if (in->dims[d].size == 0)
                stat = 1;
            else {
                buf_printf(&cond, "%sdims[%d] == 0", cond.len ? " || " : "", in->dims[d].sym);
                buf_printf(&what, "%s%s = 0", what.len ? ", " : "", f->syms[in->dims[d].sym]);
            }
        }
        const char *out = nonempty_cond(a, &n->shape);
        if (!never && (stat || cond.len) && !(out && strcmp(out, "0") == 0)) {
            int line = 0, col;
            const char *path = "";
            if (n->loc.file >= 0) {
                diag_line_col(n->loc.file, n->loc.begin, &line, &col);
                path = diag_file_path(n->loc.file) ? host_base_name(diag_file_path(n->loc.file)) : "";
            }
            if (stat)
                emit_line(e, "if (%s)", out ? out : "1");
            else if (out)
                emit_line(e, "if ((%s) && %s)", cond.data, out);
            else
                emit_line(e, "if (%s)", cond.data);
            emit_line(e, "    return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, \"%s: %s over an empty axis "
                         "(%s) has no answer (%s:%d)\");", f->name, op_info[n->op].src,
                      stat ? "a static size 0" : what.data, path, line);
        }
        buf_free(&cond);
        buf_free(&what);
    }
}

/* NAME_check: argument errors in the caller's words, before any CUDA call,
 * so they need no device.  A NULL pointer is accepted for a tensor with
 * no elements (cudaMalloc(0) may give NULL); static dims need no check in
 * the typed entries since they are not passed. */
static void emit_check(Emitter *e, Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    emit_line(e, "/* Dims first (the empty-tensor rule needs them), then pointers. */");
    emit_open(e, "%s", arena_printf(a, "static fusert_status %s_check(void *const *bufs, const int64_t *dims)\n{",
                              fi->name));
    emit_line(e, "(void)bufs;");
    emit_line(e, "(void)dims;");
    for (int i = 0; i < f->nsyms; i++) {
        if (host_sym_is_static(f, i))
            continue;
        emit_line(e, "if (dims[%d] < 0)", i);
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, \"%s: %s = %%lld is negative\",",
                  f->name, f->syms[i]);
        emit_line(e, "                            (long long)dims[%d]);", i);
    }
    for (int b = 0; b < fi->ntensors + f->nresults; b++) {
        const IrShape *s = NULL;
        const char *name = NULL;
        if (b < fi->ntensors) {
            for (int i = 0; i < f->nparams; i++)
                if (fi->pbuf[i] == b) {
                    s = &f->params[i].shape;
                    name = f->params[i].name;
                }
        } else {
            s = &f->results[b - fi->ntensors].shape;
            name = f->results[b - fi->ntensors].name;
        }
        const char *cond = nonempty_cond(a, s);
        if (cond && strcmp(cond, "0") == 0)
            continue; /* always empty: any pointer will do */
        if (cond)
            emit_line(e, "if (!bufs[%d] && %s)", b, cond);
        else
            emit_line(e, "if (!bufs[%d])", b);
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER, \"%s: %s is NULL\");", f->name,
                  name);
    }
    emit_empty_arg_checks(e, a, fi);
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "%s", "}");
}

/* Whether "(c)" is already one of the alternatives in cond. */
static int cond_has(const Buf *cond, const char *c)
{
    size_t n = strlen(c);
    for (size_t i = 0; i + n + 2 <= cond->len; i++)
        if (cond->data[i] == '(' && memcmp(cond->data + i + 1, c, n) == 0 &&
            cond->data[i + 1 + n] == ')' && (i + n + 2 == cond->len || cond->data[i + n + 2] == ' '))
            return 1;
    return 0;
}

/* When kernel k has something to write: NULL always, "0" never, else a C
 * condition "(dims[0] != 0) || (...)" over its outputs' dims. */
static const char *launch_cond(Arena *a, const Kernel *kn)
{
    Buf cond = {0};
    if (kn->noutputs == 0)
        return NULL;
    for (int i = 0; i < kn->noutputs; i++) {
        const char *c = nonempty_cond(a, &kn->outputs[i]->shape);
        if (!c) {
            buf_free(&cond);
            return NULL;
        }
        if (strcmp(c, "0") != 0 && !cond_has(&cond, c))
            buf_printf(&cond, "%s(%s)", cond.len ? " || " : "", c);
    }
    const char *r = cond.len ? arena_strndup(a, cond.data, cond.len) : "0";
    buf_free(&cond);
    return r;
}

/* NAME_run's early return where every output is empty: with nothing to
 * write, nothing is allocated, zeroed or launched. */
static void emit_run_empty(Emitter *e, Arena *a, const Plan *p)
{
    Buf any = {0};
    int always = p->nkernels == 0;
    for (int k = 0; k < p->nkernels && !always; k++) {
        const Kernel *kn = &p->kernels[k];
        if (!launch_cond(a, kn))
            always = 1;
        for (int i = 0; i < kn->noutputs && !always; i++) {
            const char *c = nonempty_cond(a, &kn->outputs[i]->shape);
            if (c && strcmp(c, "0") != 0 && !cond_has(&any, c))
                buf_printf(&any, "%s(%s)", any.len ? " || " : "", c);
        }
    }
    if (!always) {
        emit_line(e, "if (!(%s))", any.len ? any.data : "0");
        emit_line(e, "    return FUSERT_SUCCESS; /* every output is empty */");
    }
    buf_free(&any);
}

/* NAME_run's block: the caller's workspace, checked, or the stream's
 * region of the runtime. */
static void emit_run_block(Emitter *e, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    emit_line(e, "need = %s_layout(dims, off);", fi->name);
    emit_line(e, "if (need == SIZE_MAX)");
    emit_line(e, "    return fusert_set_error(FUSERT_ERROR_INVALID_VALUE,");
    emit_line(e, "                            \"%s: the dims are too large: intermediates overflow size_t\");",
              f->name);
    emit_open(e, "%s", "if (ws) {");
    emit_line(e, "if (need > 0 && !workspace)");
    emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER,");
    emit_line(e, "                            \"%s_ws: workspace is NULL but %%zu bytes are needed\", need);",
              f->name);
    emit_line(e, "if (workspace_bytes < need)");
    emit_line(e, "    return fusert_set_error(FUSERT_ERROR_WORKSPACE_TOO_SMALL,");
    emit_line(e, "                            \"%s_ws: workspace of %%zu bytes is too small: %%zu bytes \"", f->name);
    emit_line(e, "                            \"needed (%s_workspace_size)\", workspace_bytes, need);", f->name);
    emit_line(e, "if (need > 0 && ((uintptr_t)workspace %% %d) != 0)", HOST_ALIGN);
    emit_line(e, "    return fusert_set_error(FUSERT_ERROR_INVALID_VALUE,");
    emit_line(e, "                            \"%s_ws: workspace must be %d-byte aligned\");", f->name, HOST_ALIGN);
    emit_line(e, "block = need > 0 ? workspace : NULL;");
    e->indent--;
    /* Without a workspace the block is the runtime's region of the stream,
     * which a call reuses, so it allocates nothing once its stream has
     * served a call as large; only where there is none (a stream being
     * captured, an old driver) does it allocate and free its own. */
    emit_open(e, "%s", "} else if (need > 0) {");
    emit_line(e, "st = fusert_stream_scratch(stream, need, &block);");
    emit_line(e, "if (st == FUSERT_SUCCESS && !block) {");
    emit_line(e, "    st = fusec_alloc(\"%s\", &block, need, stream);", f->name);
    emit_line(e, "    owned = st == FUSERT_SUCCESS;");
    emit_line(e, "}");
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    emit_close(e, "%s", "}");
}

/* NAME_run's zeroed scratch.  The counters and atomic accumulators of the
 * reduce kernels must be all zero when each starts, and each leaves them
 * so: all of them use the runtime's zeroed scratch of the stream, with no
 * memset.  Where there is none (a stream being captured into a graph, an
 * old driver), zero this call's scratch up to the end of the last
 * counters that need it (a memset of the partials would only cost time). */
static void emit_run_zero(Emitter *e, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    const Plan *p = fi->plan;
    int nred = 0;
    for (int k = 0; k < p->nkernels; k++)
        nred += p->kernels[k].kind == KK_REDUCE;
    if (nred == 0)
        return;
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].kind == KK_REDUCE) {
            emit_line(e, "if (%s_scratch_zero_bytes(dims) > zero_need)", p->kernels[k].name);
            emit_line(e, "    zero_need = %s_scratch_zero_bytes(dims);", p->kernels[k].name);
        }
    emit_line(e, "if (zero_need > 0)");
    emit_line(e, "    st = fusert_zeroed_scratch(stream, zero_need, &zs);");
    emit_open(e, "%s", "if (st == FUSERT_SUCCESS && !zs) {");
    emit_line(e, "zero_end = off[%d];", fi->ninter);
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].kind == KK_REDUCE) {
            emit_line(e, "if (%s_scratch_zero_bytes(dims) > 0)", p->kernels[k].name);
            emit_line(e, "    zero_end = off[%d] + %s_scratch_zero_bytes(dims);", fi->ninter + 1 + k,
                      p->kernels[k].name);
        }
    emit_line(e, "if (zero_end > off[%d])", fi->ninter);
    emit_line(e, "    st = fusec_zero(\"%s\", fusec_piece(block, off[%d]), zero_end - off[%d], stream);",
              f->name, fi->ninter, fi->ninter);
    emit_close(e, "%s", "}");
}

/* NAME_run's launch of kernel k: after the kernels before it succeeded,
 * and where not every output of it is empty. */
static void emit_run_kernel(Emitter *e, Arena *a, const FnInfo *fi, int k)
{
    const IrFunc *f = fi->fn;
    const Plan *p = fi->plan;
    const Kernel *kn = &p->kernels[k];
    Buf list = {0};
    const char *sep = "";
    const char *cond = launch_cond(a, kn);
    for (int i = 0; i < kn->ninputs; i++) {
        if (host_is_scalar_param(f, host_storage_of(kn->inputs[i])))
            continue;
        buf_puts(&list, sep);
        put_buffer(&list, fi, kn->inputs[i], 0);
        sep = ", ";
    }
    for (int i = 0; i < kn->noutputs; i++) {
        buf_puts(&list, sep);
        if (kn->out_result && kn->out_result[i] >= 0)
            buf_printf(&list, "bufs[%d]", fi->ntensors + kn->out_result[i]);
        else
            put_buffer(&list, fi, kn->outputs[i], 1);
        sep = ", ";
    }
    int line = 0, col;
    if (kn->loc.file >= 0)
        diag_line_col(kn->loc.file, kn->loc.begin, &line, &col);
    emit_line(e, "%s", "");
    Buf what = {0};
    for (int i = 0; i < kn->ninputs; i++) {
        buf_puts(&what, i ? ", " : "; reads ");
        value_name(&what, fi, kn->inputs[i]);
    }
    for (int i = 0; i < kn->noutputs; i++) {
        buf_puts(&what, i ? ", " : "; writes ");
        if (kn->out_result && kn->out_result[i] >= 0)
            buf_puts(&what, f->results[kn->out_result[i]].name);
        else
            value_name(&what, fi, kn->outputs[i]);
    }
    if (line)
        emit_line(e, "/* kernel %d: %s (%s:%d)%.*s */", k, kn->name, fi->file, line, (int)what.len,
                  what.data ? what.data : "");
    else
        emit_line(e, "/* kernel %d: %s%.*s */", k, kn->name, (int)what.len, what.data ? what.data : "");
    buf_free(&what);
    if (!cond)
        emit_open(e, "%s", "if (st == FUSERT_SUCCESS) {");
    else if (strcmp(cond, "0") == 0)
        emit_open(e, "%s", "if (0) { /* every output is empty */");
    else if (!strstr(cond, " || ")) /* one alternative: its own parens do */
        emit_open(e, "%s", arena_printf(a, "if (st == FUSERT_SUCCESS && %s) {", cond));
    else
        emit_open(e, "%s", arena_printf(a, "if (st == FUSERT_SUCCESS && (%s)) {", cond));
    emit_line(e, "void *const kbufs[] = {%s};", list.len ? list.data : "NULL");
    /* column partials: the row kernel's count of partial rows, the
     * column kernel's count and where they lie (the row kernel's scratch) */
    int from = -1;
    for (int j = 0; j < k; j++)
        if (fuse_colp_partner(p, j) == k)
            from = j;
    const char *cx = fuse_colp_partner(p, k) >= 0 ? arena_printf(a, ", &colp_np%d", k)
                     : from >= 0 ? arena_printf(a, ", colp_np%d, fusec_piece(block, off[%d])", from, fi->ninter + 1 + from)
                                 : "";
    if (kn->kind == KK_REDUCE) {
        emit_line(e, "st = %s_launch(kbufs, scalars, dims, fusec_piece(block, off[%d]),", kn->name,
                  fi->ninter + 1 + k);
        emit_line(e, "        zs ? zs : fusec_piece(block, off[%d]), sm, stream%s);", fi->ninter + 1 + k, cx);
    } else
        emit_line(e, "st = %s_launch(kbufs, scalars, dims, fusec_piece(block, off[%d]), NULL, sm, stream%s);",
                  kn->name, fi->ninter + 1 + k, cx);
    emit_close(e, "%s", "}");
    buf_free(&list);
}

/* NAME_run: the body shared by NAME and NAME_ws.  One block per call
 * (one allocation, not one per intermediate: fewer pool operations and one
 * free), stream-ordered so that the call never synchronises.  After the
 * first failure no further kernel is launched, but the block is still
 * freed, and the first error is the one returned. */
static void emit_run(Emitter *e, Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    const Plan *p = fi->plan;
    int npieces = fi->ninter + 1 + p->nkernels;
    emit_line(e, "/* Check, get the block (the caller's workspace when ws is set), zero the");
    emit_line(e, " * scratch, launch the %d kernel%s in order, free. */", p->nkernels,
              p->nkernels == 1 ? "" : "s");
    emit_open(e, "%s", arena_printf(a, "static fusert_status %s_run(void *const *bufs, const double *scalars, "
                                 "const int64_t *dims,\n        int ws, void *workspace, size_t workspace_bytes, "
                                 "fusert_stream stream)\n{",
                              fi->name));
    emit_line(e, "size_t off[%d];", npieces + 1);
    emit_line(e, "void *block = NULL;");
    emit_line(e, "int owned = 0, sm = 0;");
    emit_line(e, "fusert_status st = %s_check(bufs, dims);", fi->name);
    emit_line(e, "size_t need;");
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].kind == KK_REDUCE) {
            emit_line(e, "size_t zero_end, zero_need = 0;");
            emit_line(e, "void *zs = NULL;");
            break;
        }
    for (int k = 0; k < p->nkernels; k++)
        if (fuse_colp_partner(p, k) >= 0)
            /* the column partials' rows a row kernel leaves for its column
             * kernel (fuse_colp_partner), 0 where it leaves none */
            emit_line(e, "int colp_np%d = 0;", k);
    emit_line(e, "(void)scalars;");
    emit_line(e, "(void)sm;");
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    emit_run_empty(e, a, p);
    emit_run_block(e, fi);
    emit_run_zero(e, fi);
    if (p->nkernels > 0) {
        emit_line(e, "if (st == FUSERT_SUCCESS)");
        emit_line(e, "    st = fusec_sm_count(\"%s\", &sm);", f->name);
    }
    for (int k = 0; k < p->nkernels; k++)
        emit_run_kernel(e, a, fi, k);
    emit_open(e, "%s", "if (owned) {");
    emit_line(e, "fusert_status st2 = fusec_free(\"%s\", block, stream);", f->name);
    emit_line(e, "if (st == FUSERT_SUCCESS)");
    emit_line(e, "    st = st2;");
    emit_close(e, "%s", "}");
    emit_line(e, "return st;");
    emit_close(e, "%s", "}");
}

/* The arrays the typed entries hand to NAME_run. */
static void emit_pack(Emitter *e, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    Buf b = {0};
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].is_tensor)
            buf_printf(&b, "%s(void *)%s", b.len ? ", " : "", fi->pname[i]);
    for (int i = 0; i < f->nresults; i++)
        buf_printf(&b, "%s(void *)%s", b.len ? ", " : "", fi->rname[i]);
    emit_line(e, "void *const bufs[] = {%s};", b.len ? b.data : "NULL");
    b.len = 0;
    for (int i = 0; i < f->nparams; i++)
        buf_printf(&b, "%s%s%s", i ? ", " : "", f->params[i].is_tensor ? "0" : "(double)",
                   f->params[i].is_tensor ? "" : fi->pname[i]);
    emit_line(e, "const double scalars[] = {%s};", b.len ? b.data : "0");
    b.len = 0;
    for (int i = 0; i < f->nsyms; i++) {
        if (host_sym_is_static(f, i))
            buf_printf(&b, "%s%lld", i ? ", " : "", (long long)f->sym_static[i]);
        else
            buf_printf(&b, "%s%s", i ? ", " : "", fi->dname[i]);
    }
    emit_line(e, "const int64_t dims[] = {%s};", b.len ? b.data : "0");
    buf_free(&b);
}

/* The five extern functions of a fn.  NAME_packed's dims are every sym in
 * IrFunc.syms order, static ones included (and checked): a tool that reads
 * shapes from .npy files can fill them without knowing about -D. */
static void emit_entries(Emitter *e, Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    const Plan *p = fi->plan;
    const char *tp = host_typed_params(a, fi);
    const char *sep = *tp ? ", " : "";
    emit_line(e, "%s", "");
    host_wrapped(e, arena_printf(a, "fusert_status %s(%s%sfusert_stream stream)", fi->name, tp, sep));
    emit_open(e, "%s", "{");
    emit_pack(e, fi);
    emit_line(e, "return %s_run(bufs, scalars, dims, 0, NULL, 0, stream);", fi->name);
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    host_wrapped(e, arena_printf(a, "fusert_status %s_ws(%s%svoid *workspace, size_t workspace_bytes, "
                                    "fusert_stream stream)",
                                 fi->name, tp, sep));
    emit_open(e, "%s", "{");
    emit_pack(e, fi);
    emit_line(e, "return %s_run(bufs, scalars, dims, 1, workspace, workspace_bytes, stream);", fi->name);
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    host_wrapped(e, arena_printf(a, "size_t %s_workspace_size(%s)", fi->name, host_dim_params(a, fi, 0)));
    emit_open(e, "%s", "{");
    Buf b = {0};
    int ndyn = 0;
    for (int i = 0; i < f->nsyms; i++) {
        if (host_sym_is_static(f, i)) {
            buf_printf(&b, "%s%lld", i ? ", " : "", (long long)f->sym_static[i]);
        } else {
            buf_printf(&b, "%s%s", i ? ", " : "", fi->dname[i]);
            ndyn++;
        }
    }
    emit_line(e, "const int64_t dims[] = {%s};", b.len ? b.data : "0");
    emit_line(e, "size_t off[%d];", fi->ninter + 2 + p->nkernels);
    for (int i = 0; i < f->nsyms; i++)
        if (!host_sym_is_static(f, i)) {
            emit_line(e, "if (%s < 0)", fi->dname[i]);
            emit_line(e, "    return SIZE_MAX;");
        }
    emit_line(e, "return %s_layout(dims, off);", fi->name);
    emit_close(e, "%s", "}");
    (void)ndyn;

    /* _packed: check the arrays and the static dims, call NAME_run */
    emit_line(e, "%s", "");
    emit_open(e, "%s", arena_printf(a, "fusert_status %s_packed(void *const *buffers, const double *scalars,\n"
                                 "        const int64_t *dims, fusert_stream stream)\n{",
                              fi->name));
    emit_line(e, "(void)scalars;");
    emit_line(e, "(void)dims;");
    if (fi->ntensors + f->nresults > 0) {
        emit_line(e, "if (!buffers)");
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER, \"%s_packed: buffers is NULL\");",
                  f->name);
    } else {
        emit_line(e, "(void)buffers;");
    }
    if (fi->nscalars > 0) {
        emit_line(e, "if (!scalars)");
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER, \"%s_packed: scalars is NULL\");",
                  f->name);
    }
    if (f->nsyms > 0) {
        emit_line(e, "if (!dims)");
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER, \"%s_packed: dims is NULL\");",
                  f->name);
    }
    for (int i = 0; i < f->nsyms; i++) {
        if (!host_sym_is_static(f, i))
            continue;
        long long v = (long long)f->sym_static[i];
        emit_line(e, "if (dims[%d] != %lld)", i, v);
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_SHAPE_MISMATCH,");
        emit_line(e, "                            \"%s: dim %s must be %lld (compiled with -D %s=%lld), got %%lld\",",
                  f->name, f->syms[i], v, f->syms[i], v);
        emit_line(e, "                            (long long)dims[%d]);", i);
    }
    /* straight to NAME_run, not through the exported NAME: one packing, and
     * no call that another library's symbol of the same name could take
     * (ELF interposition) when the module is loaded into a process.  The
     * scalars go through the C type NAME takes, as they would there. */
    b.len = 0;
    int si = 0;
    for (int i = 0; i < f->nparams; i++) {
        const IrParam *pa = &f->params[i];
        if (i)
            buf_puts(&b, ", ");
        if (pa->is_tensor)
            buf_puts(&b, "0");
        else if (pa->dtype == DT_BOOL)
            buf_printf(&b, "(double)(scalars[%d] != 0)", si++);
        else
            buf_printf(&b, "(double)(%s)scalars[%d]", host_scalar_ctype(pa->dtype), si++);
    }
    emit_line(e, "const double sc[] = {%s};", b.len ? b.data : "0");
    if (f->nsyms == 0)
        emit_line(e, "static const int64_t no_dims[1] = {0};");
    emit_line(e, "return %s_run(buffers, sc, %s, 0, NULL, 0, stream);", fi->name,
              f->nsyms ? "dims" : "no_dims");
    buf_free(&b);
    emit_close(e, "%s", "}");
    emit_line(e, "%s", "");
    emit_open(e, "%s", arena_printf(a, "int %s_kernel_count(void)\n{", fi->name));
    emit_line(e, "return %d;", p->nkernels);
    emit_close(e, "%s", "}");
}

/* ---- the source ------------------------------------------------------------------- */

/* The main output.  Order matters: the stubs use FUSEC_LAUNCH, so the
 * support block comes first; the entries call the stubs, so they come last.
 * In the nvrtc target the kernels are data (a string), in the cuda target
 * they are code compiled by nvcc together with the host part. */
void emit_host_source(Buf *out, Plan **plans, int nplans, const EmitOptions *o)
{
    Arena a = {0};
    Emitter e = {out, 0};
    Buf names = {0}, kernels = {0}, stubs = {0};
    emit_cuda_kernel_names(&names, plans, nplans, o);
    emit_cuda_kernels(&kernels, plans, nplans, o);
    emit_cuda_launchers(&stubs, plans, nplans, o);
    /* the names list goes on one line: strip trailing blanks and commas */
    while (names.len && (names.data[names.len - 1] == '\n' || names.data[names.len - 1] == ' ' ||
                         names.data[names.len - 1] == ','))
        names.len--;
    buf_putc(&names, 0);
    const char *src = host_base_name(o->source_name ? o->source_name : o->module);
    int cuda = o->target == TARGET_CUDA;

    emit_line(&e, "/* %s.%s -- generated by fusec %s from %s; do not edit.", o->module, cuda ? "cu" : "c",
              FUSEC_VERSION, src);
    if (cuda) {
        emit_line(&e, " * Target cuda: compile with nvcc (-I for fusert.h) and link with libfusert");
        emit_line(&e, " * (used only for fusert_set_error and fusert_last_error). */");
    } else {
        emit_line(&e, " * Target nvrtc: plain C11; the kernels are compiled at run time by fusert");
        emit_line(&e, " * (NVRTC, cached on disk).  Compile with -I for fusert.h, link with");
        emit_line(&e, " * libfusert. */");
    }
    emit_line(&e, "#include \"%s\"", o->header_name);
    if (cuda) {
        emit_line(&e, "#include <cuda_runtime.h>");
        emit_line(&e, "#include <atomic>");
    }
    emit_line(&e, "#include <stddef.h>");
    emit_line(&e, "#include <stdint.h>");
    emit_line(&e, "%s", "");
    if (cuda) {
        emit_line(&e, "/* ==== kernels ==== */");
        emit_line(&e, "/* Not every module uses every helper of the kernel preamble: no warning");
        emit_line(&e, " * #177 (declared but never referenced) for the kernels' part. */");
        emit_line(&e, "#if defined(__NVCC__)");
        emit_line(&e, "#pragma nv_diag_suppress 177");
        emit_line(&e, "#endif");
        buf_write(out, kernels.data ? kernels.data : "", kernels.len);
        if (kernels.len && kernels.data[kernels.len - 1] != '\n')
            buf_putc(out, '\n');
        emit_line(&e, "#if defined(__NVCC__)");
        emit_line(&e, "#pragma nv_diag_default 177");
        emit_line(&e, "#endif");
        emit_line(&e, "%s", "");
        emit_cuda_support(&e, &a, names.data, o->module);
    } else {
        emit_line(&e, "static const char fusec_module_name[] = \"%s\";", o->module);
        emit_line(&e, "%s", "");
        emit_line(&e, "/* ==== kernels: CUDA source for NVRTC ==== */");
        emit_line(&e, "#if defined(__GNUC__)");
        emit_line(&e, "#pragma GCC diagnostic push");
        emit_line(&e, "#pragma GCC diagnostic ignored \"-Woverlength-strings\"");
        emit_line(&e, "#endif");
        emit_line(&e, "static const char fusec_source[] =");
        put_c_string(out, kernels.data ? kernels.data : "", kernels.len);
        emit_line(&e, "    ;");
        emit_line(&e, "#if defined(__GNUC__)");
        emit_line(&e, "#pragma GCC diagnostic pop");
        emit_line(&e, "#endif");
        emit_line(&e, "%s", "");
        emit_nvrtc_support(&e, &a, names.data, o->fast_math);
    }
    emit_line(&e, "%s", "");
    emit_line(&e, "/* ==== launch stubs ==== */");
    buf_write(out, stubs.data ? stubs.data : "", stubs.len);
    if (stubs.len && stubs.data[stubs.len - 1] != '\n')
        buf_putc(out, '\n');

    for (int i = 0; i < nplans; i++) {
        FnInfo fi;
        host_fn_info(&a, plans[i], &fi);
        emit_line(&e, "%s", "");
        if (fi.line)
            emit_line(&e, "/* ==== %s (%s:%d): %d kernel%s ==== */", fi.name, fi.file, fi.line,
                      plans[i]->nkernels, plans[i]->nkernels == 1 ? "" : "s");
        else
            emit_line(&e, "/* ==== %s: %d kernel%s ==== */", fi.name, plans[i]->nkernels,
                      plans[i]->nkernels == 1 ? "" : "s");
        emit_line(&e, "/* %s */", host_signature(&a, fi.fn));
        emit_line(&e, "%s", "");
        emit_layout(&e, &a, &fi);
        emit_line(&e, "%s", "");
        emit_check(&e, &a, &fi);
        emit_line(&e, "%s", "");
        emit_run(&e, &a, &fi);
        emit_entries(&e, &a, &fi);
    }
    emit_done(&e);
    buf_free(&names);
    buf_free(&kernels);
    buf_free(&stubs);
    arena_free_all(&a);
}
