/* fuzz_compile.c -- libFuzzer harness over the whole compiler:
 * bytes -> parse -> sema -> fusion (fused and --no-fusion) -> CUDA and host
 * code for both targets.  Any crash, sanitizer report, leak or hang is a
 * bug; diagnostics are expected and counted, not printed.
 *
 * Build: cmake -DFUSEC_FUZZ=ON -DCMAKE_C_COMPILER=clang (tests/fuzz/run.sh).
 * The input's path is in a folder that does not exist, so imports fail
 * cleanly instead of reading the disk. */
#include "emit.h"
#include "frontend.h"
#include "fusion.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void compile_all(Arena *a, IrModule *m, int no_fusion)
{
    FusionOptions fo = {no_fusion, 128, -1};
    Plan **plans = ARENA_ARRAY(a, Plan *, m->nfns ? m->nfns : 1);
    for (int i = 0; i < m->nfns; i++) {
        plans[i] = fuse_plan(a, m->fns[i], &fo);
        if (!plans[i])
            return;
    }
    CudaModule *cuda = emit_cuda_lower(plans, m->nfns, 0);
    for (int t = 0; t < 2; t++) {
        EmitOptions eo = {.target = t ? TARGET_NVRTC : TARGET_CUDA, .module = "fuzz",
                          .header_name = "fuzz.h", .source_name = "fuzz.fuse", .cuda = cuda};
        Buf src = {0}, hdr = {0};
        emit_host_source(&src, plans, m->nfns, &eo);
        emit_header(&hdr, plans, m->nfns, &eo);
        buf_free(&src);
        buf_free(&hdr);
    }
    emit_cuda_module_free(cuda);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0; /* keep each run short; size limits are tested elsewhere */
    Arena a = {0};
    char *text = arena_alloc(&a, size + 1);
    memcpy(text, data, size);
    diag_set_quiet(1);
    int file = diag_add_file("/nonexistent-fuzz-dir/fuzz.fuse", text, size);
    AstFile *ast = parse_source(&a, file);
    if (ast && diag_error_count() == 0) {
        SemaOptions so = {0};
        so.warn_unused = 1;
        IrModule *m = sema_program(&a, ast, &so);
        if (m && diag_error_count() == 0) {
            compile_all(&a, m, 0);
            compile_all(&a, m, 1);
        }
    }
    arena_free_all(&a);
    diag_reset();
    return 0;
}
