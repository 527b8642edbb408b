/* cnames.c -- names a fn cannot export to C, and names a param cannot
 * keep there.
 *
 * Every fn of the main file becomes C functions of the generated header
 * (NAME, NAME_ws, NAME_packed, ...), compiled together with the C library,
 * the CUDA runtime and math headers (the .cu includes cuda_runtime.h and
 * <atomic>, and nvcc compiles it in GNU mode) and whatever the user's
 * program includes.  A fn called `double`, `random` or `float4` would give
 * a C compiler error deep in generated code, so sema reports it at the
 * fn's name instead.  The table (cnames_table.inc) holds C and C++
 * keywords and everything the headers our output includes declare:
 * functions, types, variables and macros of the C library, CUDA's math
 * functions, built-in variables and vector types.  tools/cnames-scan.py
 * asks the toolchain for that list and checks fusec refuses all of it.
 * Prefixes cover the CUDA runtime, driver and NVRTC APIs, fusec's own
 * namespace and the identifiers C reserves. */
#include "frontend.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    const char *what;
    int obj; /* an object-like macro: no C identifier can be spelled so either */
} CName;

static const char keyword[] = "a C or C++ keyword";
#define KW keyword
#define MATH "a function of the C math library (math.h)"
#define LIBC "a function of the C library"
#define LIBVAR "a variable of the C library"
#define TYPE "a C type name"
#define MACRO "a macro of the C library headers"
#define CCMACRO "a macro the C compiler predefines in GNU mode (as nvcc compiles the .cu)"
#define CXXMACRO "a macro of the C++ library headers"
#define CXX "the namespace of the C++ library"
#define CUMATH "a function of CUDA's math library (declared by cuda_runtime.h)"
#define CUDEV "a function of CUDA's device API (declared by cuda_runtime.h)"
#define CUVAR "a CUDA built-in variable"
#define CUVEC "a CUDA vector type (declared by cuda_runtime.h)"
#define CUMACRO "a macro of the CUDA headers"
#define CUDA "a name the CUDA runtime headers declare"
#define MAIN "the C program entry point"
#define OBJ 1

/* sorted by name (strcmp), for bsearch; a unit test checks the order */
static const CName cnames[] = {
#include "cnames_table.inc"
};

static int cmp_cname(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const CName *)elem)->name);
}

static const CName *lookup(const char *name)
{
    return bsearch(name, cnames, sizeof cnames / sizeof cnames[0], sizeof cnames[0], cmp_cname);
}

static int upper(char c) { return c >= 'A' && c <= 'Z'; }
static int lower(char c) { return c >= 'a' && c <= 'z'; }
static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* The namespaces no exported name may enter, by prefix (none longer than
 * NS_LONGEST characters): what C reserves; fusec's own, which the
 * generated code (fusec_ and fz_, fzk_ helpers, FUSEC_, FZ_, FZK_
 * macros) and the runtime (fusert_, FUSERT_) use; and the CUDA runtime,
 * driver and NVRTC APIs'. */
enum { NS_NONE, NS_C, NS_FUSEC, NS_CUDA };
#define NS_LONGEST 7
static const char *const ns_what[] = {
    NULL,
    "reserved for the C implementation (it starts with '__' or '_' and a capital)",
    "in the namespace of fusec's generated code and runtime (fusec_, fusert_, fz_, fzk_, and "
    "the same in capitals)",
    "in the namespace of the CUDA runtime, driver or NVRTC API (cuda, cu, nvrtc and a capital; CU "
    "and a small letter; CU_, CUDA_, CUDART_, NVRTC_)",
};

static int namespace_of(const char *s)
{
    static const char *const ours[] = {"fusec_", "fusert_", "fz_", "fzk_", "FUSEC_", "FUSERT_", "FZ_", "FZK_"};
    if (s[0] == '_' && (s[1] == '_' || upper(s[1])))
        return NS_C;
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        if (starts(s, ours[i]))
            return NS_FUSEC;
    if ((starts(s, "cuda") && upper(s[4])) || (starts(s, "cu") && upper(s[2])) ||
        (starts(s, "nvrtc") && upper(s[5])) || (starts(s, "CU") && lower(s[2])) || starts(s, "CU_") ||
        starts(s, "CUDA_") || starts(s, "CUDART_") || starts(s, "NVRTC_"))
        return NS_CUDA;
    return NS_NONE;
}

const char *c_name_clash(const char *name)
{
    int ns = namespace_of(name);
    if (ns)
        return ns_what[ns];
    const CName *c = lookup(name);
    return c ? c->what : NULL;
}

const char *c_name_stem_clash(const char *name)
{
    /* NAME_ws, NAME_packed, ...: a prefix rule sees NAME_ only when NAME is
     * shorter than the rule */
    char buf[NS_LONGEST + 3];
    size_t n = strlen(name);
    if (n > NS_LONGEST)
        return NULL;
    memcpy(buf, name, n);
    memcpy(buf + n, "_x", 3);
    return ns_what[namespace_of(buf)];
}

const char *c_prefix_clash(const char *prefix)
{
    static const char *const stems[] = {"cu", "cuda", "nvrtc", "CU"};
    static const char *const every[] = {
        NULL,
        "every name it starts is reserved for the C implementation (a name starting with '__' or '_' "
        "and a capital)",
        "every name it starts is in the namespace of fusec's generated code and runtime (fusec_, "
        "fusert_, fz_, fzk_, and the same in capitals)",
        "every name it starts is in the namespace of the CUDA runtime, driver or NVRTC API (cuda, "
        "cu, nvrtc and a capital; CU and a small letter; CU_, CUDA_, CUDART_, NVRTC_)",
    };
    int ns = namespace_of(prefix);
    if (ns)
        return every[ns];
    for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++)
        if (strcmp(prefix, stems[i]) == 0)
            return "it is how the names of the CUDA runtime, driver and NVRTC APIs begin (cuda, cu, "
                   "nvrtc and a capital; CU and a letter or '_'), so fns would take their names";
    return NULL;
}

int c_name_unspellable(const char *name)
{
    const CName *c = lookup(name);
    return c && (c->obj || c->what == KW);
}

int c_name_ours(const char *name) { return namespace_of(name) == NS_FUSEC; }

int c_name_c_reserved(const char *name) { return namespace_of(name) == NS_C; }

int c_name_table_sorted(void)
{
    for (size_t i = 1; i < sizeof cnames / sizeof cnames[0]; i++)
        if (strcmp(cnames[i - 1].name, cnames[i].name) >= 0)
            return 0;
    return 1;
}
