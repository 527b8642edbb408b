/* cnames.c -- names a fn cannot export to C.
 *
 * Every fn of the main file becomes C functions in the generated header
 * (NAME, NAME_ws, NAME_packed, ...), compiled together with the C library,
 * the CUDA runtime and math headers (the .cu includes cuda_runtime.h) and
 * whatever the user's program includes.  A fn called `double` or `hypot`
 * would give a C compiler error deep in generated code, so sema reports it
 * at the fn's name instead.  The table lists C and C++ keywords, the
 * functions and macros of the C library headers a program commonly
 * includes next to ours (math.h, stdlib.h, stdio.h, string.h, time.h,
 * ctype.h) and the extra functions of CUDA's math API; prefixes cover the
 * CUDA runtime, driver and NVRTC APIs and fusec's own namespace. */
#include "frontend.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    const char *what;
} CName;

#define KW "a C or C++ keyword"
#define MATH "a function of the C math library (math.h)"
#define LIBC "a function of the C standard library"
#define CUMATH "a function of CUDA's math library (declared by cuda_runtime.h)"
#define TYPE "a C type name"

/* sorted by name (strcmp), for bsearch; a unit test checks the order */
static const CName cnames[] = {
    {"abort", LIBC}, {"abs", LIBC}, {"acos", MATH}, {"acosf", MATH}, {"acosh", MATH},
    {"acoshf", MATH}, {"alignas", KW}, {"alignof", KW}, {"and", KW}, {"asin", MATH},
    {"asinf", MATH}, {"asinh", MATH}, {"asinhf", MATH}, {"asm", KW}, {"assert", LIBC},
    {"atan", MATH}, {"atan2f", MATH}, {"atanf", MATH}, {"atanh", MATH}, {"atanhf", MATH},
    {"atexit", LIBC}, {"atof", LIBC}, {"atoi", LIBC}, {"atol", LIBC}, {"atoll", LIBC},
    {"auto", KW}, {"bitand", KW}, {"bitor", KW}, {"bool", KW}, {"break", KW},
    {"bsearch", LIBC}, {"calloc", LIBC}, {"case", KW}, {"catch", KW}, {"cbrtf", MATH},
    {"ceilf", MATH}, {"char", KW}, {"class", KW}, {"clock", LIBC}, {"compl", KW},
    {"const", KW}, {"constexpr", KW}, {"continue", KW}, {"copysign", MATH},
    {"copysignf", MATH}, {"cosf", MATH}, {"cosh", MATH}, {"coshf", MATH}, {"cospi", CUMATH},
    {"cospif", CUMATH}, {"ctime", LIBC}, {"cyl_bessel_i0", CUMATH}, {"cyl_bessel_i0f", CUMATH},
    {"cyl_bessel_i1", CUMATH}, {"cyl_bessel_i1f", CUMATH}, {"decltype", KW}, {"default", KW},
    {"delete", KW}, {"difftime", LIBC}, {"div", LIBC}, {"do", KW}, {"double", KW},
    {"else", KW}, {"enum", KW}, {"erfc", MATH}, {"erfcf", MATH}, {"erfcinv", CUMATH},
    {"erfcinvf", CUMATH}, {"erfcx", CUMATH}, {"erfcxf", CUMATH}, {"erff", MATH},
    {"erfinv", CUMATH}, {"erfinvf", CUMATH}, {"exit", LIBC}, {"exp10", CUMATH},
    {"exp10f", CUMATH}, {"exp2f", MATH}, {"expf", MATH}, {"explicit", KW}, {"expm1f", MATH},
    {"export", KW}, {"extern", KW}, {"fabs", MATH}, {"fabsf", MATH}, {"false", KW},
    {"fclose", LIBC}, {"fdim", MATH}, {"fdimf", MATH}, {"fdividef", CUMATH}, {"feof", LIBC},
    {"ferror", LIBC}, {"fflush", LIBC}, {"fgetc", LIBC}, {"fgets", LIBC}, {"float", KW},
    {"floorf", MATH}, {"fmaf", MATH}, {"fmax", MATH}, {"fmaxf", MATH}, {"fmin", MATH},
    {"fminf", MATH}, {"fmod", MATH}, {"fmodf", MATH}, {"fopen", LIBC}, {"for", KW},
    {"fprintf", LIBC}, {"fputc", LIBC}, {"fputs", LIBC}, {"fread", LIBC}, {"free", LIBC},
    {"frexp", MATH}, {"frexpf", MATH}, {"friend", KW}, {"fscanf", LIBC}, {"fseek", LIBC},
    {"ftell", LIBC}, {"fwrite", LIBC}, {"getc", LIBC}, {"getchar", LIBC}, {"getenv", LIBC},
    {"gmtime", LIBC}, {"goto", KW}, {"hypot", MATH}, {"hypotf", MATH}, {"if", KW},
    {"ilogb", MATH}, {"ilogbf", MATH}, {"inline", KW}, {"int", KW}, {"int16_t", TYPE},
    {"int32_t", TYPE}, {"int64_t", TYPE}, {"int8_t", TYPE}, {"intptr_t", TYPE},
    {"isalnum", LIBC}, {"isalpha", LIBC}, {"isdigit", LIBC}, {"isfinite", MATH},
    {"islower", LIBC}, {"isnormal", MATH}, {"isspace", LIBC}, {"isupper", LIBC},
    {"j0", MATH}, {"j0f", CUMATH}, {"j1", MATH}, {"j1f", CUMATH}, {"jn", MATH},
    {"jnf", CUMATH}, {"labs", LIBC}, {"ldexp", MATH}, {"ldexpf", MATH}, {"ldiv", LIBC},
    {"lgamma", MATH}, {"lgammaf", MATH}, {"llabs", LIBC}, {"llrint", MATH}, {"llround", MATH},
    {"localtime", LIBC}, {"log10", MATH}, {"log10f", MATH}, {"log1pf", MATH}, {"log2f", MATH},
    {"logb", MATH}, {"logbf", MATH}, {"logf", MATH}, {"long", KW}, {"longjmp", LIBC},
    {"lrint", MATH}, {"lround", MATH}, {"main", "the C program entry point"},
    {"malloc", LIBC}, {"memchr", LIBC}, {"memcmp", LIBC}, {"memcpy", LIBC},
    {"memmove", LIBC}, {"memset", LIBC}, {"mktime", LIBC}, {"modf", MATH}, {"modff", MATH},
    {"mutable", KW}, {"namespace", KW}, {"nan", MATH}, {"nanf", MATH}, {"nearbyint", MATH},
    {"nearbyintf", MATH}, {"new", KW}, {"nextafter", MATH}, {"nextafterf", MATH},
    {"noexcept", KW}, {"norm", CUMATH}, {"norm3d", CUMATH}, {"norm3df", CUMATH},
    {"norm4d", CUMATH}, {"norm4df", CUMATH}, {"normcdf", CUMATH}, {"normcdff", CUMATH},
    {"normcdfinv", CUMATH}, {"normcdfinvf", CUMATH}, {"normf", CUMATH}, {"not", KW},
    {"nullptr", KW}, {"operator", KW}, {"or", KW}, {"perror", LIBC}, {"powf", MATH},
    {"printf", LIBC}, {"private", KW}, {"protected", KW}, {"ptrdiff_t", TYPE},
    {"public", KW}, {"putc", LIBC}, {"putchar", LIBC}, {"puts", LIBC}, {"qsort", LIBC},
    {"raise", LIBC}, {"rand", LIBC}, {"rcbrt", CUMATH}, {"rcbrtf", CUMATH},
    {"realloc", LIBC}, {"register", KW}, {"reinterpret_cast", KW}, {"remainder", MATH},
    {"remainderf", MATH}, {"remove", LIBC}, {"remquo", MATH}, {"remquof", MATH},
    {"rename", LIBC}, {"restrict", KW}, {"return", KW}, {"rewind", LIBC}, {"rhypot", CUMATH},
    {"rhypotf", CUMATH}, {"rint", MATH}, {"rintf", MATH}, {"rnorm", CUMATH},
    {"rnorm3d", CUMATH}, {"rnorm3df", CUMATH}, {"rnorm4d", CUMATH}, {"rnorm4df", CUMATH},
    {"rnormf", CUMATH}, {"roundf", MATH}, {"rsqrtf", CUMATH}, {"scalbln", MATH},
    {"scalbn", MATH}, {"scalbnf", MATH}, {"scanf", LIBC}, {"setjmp", LIBC}, {"short", KW},
    {"signal", LIBC}, {"signbit", MATH}, {"signed", KW}, {"sincos", CUMATH},
    {"sincosf", CUMATH}, {"sincospi", CUMATH}, {"sincospif", CUMATH}, {"sinf", MATH},
    {"sinh", MATH}, {"sinhf", MATH}, {"sinpi", CUMATH}, {"sinpif", CUMATH}, {"size_t", TYPE},
    {"sizeof", KW}, {"snprintf", LIBC}, {"sprintf", LIBC}, {"sqrtf", MATH}, {"srand", LIBC},
    {"sscanf", LIBC}, {"static", KW}, {"static_assert", KW}, {"static_cast", KW},
    {"strcat", LIBC}, {"strchr", LIBC}, {"strcmp", LIBC}, {"strcpy", LIBC}, {"strerror", LIBC},
    {"strlen", LIBC}, {"strncmp", LIBC}, {"strncpy", LIBC}, {"strrchr", LIBC},
    {"strstr", LIBC}, {"strtod", LIBC}, {"strtof", LIBC}, {"strtok", LIBC}, {"strtol", LIBC},
    {"strtoll", LIBC}, {"strtoul", LIBC}, {"struct", KW}, {"switch", KW}, {"system", LIBC},
    {"tanf", MATH}, {"tanh", MATH}, {"tanhf", MATH}, {"template", KW}, {"tgamma", MATH},
    {"tgammaf", MATH}, {"this", KW}, {"throw", KW}, {"time", LIBC}, {"tmpfile", LIBC},
    {"tolower", LIBC}, {"toupper", LIBC}, {"true", KW}, {"truncf", MATH}, {"try", KW},
    {"typedef", KW}, {"typeid", KW}, {"typename", KW}, {"uint16_t", TYPE},
    {"uint32_t", TYPE}, {"uint64_t", TYPE}, {"uint8_t", TYPE}, {"uintptr_t", TYPE},
    {"union", KW}, {"unsigned", KW}, {"using", KW}, {"virtual", KW}, {"void", KW},
    {"volatile", KW}, {"wchar_t", KW}, {"while", KW}, {"xor", KW}, {"y0", MATH},
    {"y0f", CUMATH}, {"y1", MATH}, {"y1f", CUMATH}, {"yn", MATH}, {"ynf", CUMATH},
};

static int cmp_cname(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const CName *)elem)->name);
}

static int has_api_prefix(const char *s, const char *p)
{
    size_t n = strlen(p);
    return strncmp(s, p, n) == 0 && s[n] >= 'A' && s[n] <= 'Z';
}

const char *c_name_clash(const char *name)
{
    if (name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z')))
        return "reserved for the C implementation (it starts with '__' or '_' and a capital)";
    if (strncmp(name, "fusert_", 7) == 0 || strncmp(name, "fusec_", 6) == 0)
        return "in the namespace of fusec's generated code and runtime (fusec_, fusert_)";
    if (has_api_prefix(name, "cuda") || has_api_prefix(name, "cu") || has_api_prefix(name, "nvrtc"))
        return "in the namespace of the CUDA runtime, driver or NVRTC API";
    const CName *c = bsearch(name, cnames, sizeof cnames / sizeof cnames[0], sizeof cnames[0], cmp_cname);
    return c ? c->what : NULL;
}

int c_name_table_sorted(void)
{
    for (size_t i = 1; i < sizeof cnames / sizeof cnames[0]; i++)
        if (strcmp(cnames[i - 1].name, cnames[i].name) >= 0)
            return 0;
    return 1;
}
