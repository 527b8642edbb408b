/* cubin_functions.h -- the function symbols of a CUBIN, for the test tools
 * that need to know which kernels NVRTC left in a module: nvrtc-check
 * --functions (tests/codegen/Inputs/nvrtc_check.c) and the fake driver
 * (tests/runtime/Inputs/fake_libcuda.c).  Header-only, C11.
 *
 * A CUBIN is an ELF64 little-endian image; its symbol table marks every
 * function with STT_FUNC, and a kernel (a __global__ entry point) also has
 * STO_CUDA_ENTRY (0x10) in st_other. */
#ifndef CUBIN_FUNCTIONS_H
#define CUBIN_FUNCTIONS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t cubin_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Call fn(name, is_kernel, ctx) for every function symbol of the n-byte
 * image, in symbol table order.  Returns 0 when the image is not an ELF64
 * file whose tables lie inside those n bytes. */
static inline int cubin_functions(const unsigned char *img, size_t n,
                                  void (*fn)(const char *name, int is_kernel, void *ctx),
                                  void *ctx)
{
    if (n < 64 || memcmp(img, "\x7f" "ELF", 4) != 0 || img[4] != 2 || img[5] != 1)
        return 0;
    uint64_t shoff = cubin_le(img + 40, 8);
    unsigned shentsize = (unsigned)cubin_le(img + 58, 2), shnum = (unsigned)cubin_le(img + 60, 2);
    if (shentsize < 64 || shoff > n || (uint64_t)shnum * shentsize > n - shoff)
        return 0;
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = img + shoff + (size_t)i * shentsize;
        if (cubin_le(sh + 4, 4) != 2) /* SHT_SYMTAB */
            continue;
        uint64_t off = cubin_le(sh + 24, 8), size = cubin_le(sh + 32, 8);
        unsigned link = (unsigned)cubin_le(sh + 40, 4);
        uint64_t entsize = cubin_le(sh + 56, 8);
        if (link >= shnum || entsize < 24 || off > n || size > n - off)
            return 0;
        const unsigned char *str = img + shoff + (size_t)link * shentsize;
        uint64_t stroff = cubin_le(str + 24, 8), strsize = cubin_le(str + 32, 8);
        if (stroff > n || strsize > n - stroff)
            return 0;
        for (uint64_t s = 0; s + entsize <= size; s += entsize) {
            const unsigned char *sym = img + off + s;
            uint64_t name = cubin_le(sym, 4);
            if ((sym[4] & 0xf) != 2 || name >= strsize) /* STT_FUNC */
                continue;
            const char *nm = (const char *)img + stroff + name;
            if (!memchr(nm, 0, strsize - name))
                return 0;
            fn(nm, (sym[5] & 0x10) != 0, ctx);
        }
    }
    return 1;
}
#endif
