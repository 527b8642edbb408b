/* dtype.c -- dtype names, sizes and promotion. */
#include "dtype.h"
#include <string.h>

static const struct {
    const char *name, *ctype;
    int size;
} info[DT_COUNT] = {
    [DT_BOOL] = {"bool", "bool", 1},  [DT_I32] = {"i32", "int32_t", 4},
    [DT_I64] = {"i64", "int64_t", 8}, [DT_F16] = {"f16", "uint16_t", 2},
    [DT_BF16] = {"bf16", "uint16_t", 2}, [DT_F32] = {"f32", "float", 4},
    [DT_F64] = {"f64", "double", 8},
};

const char *dtype_name(DType t) { return t < DT_COUNT ? info[t].name : "?"; }
const char *dtype_ctype(DType t) { return t < DT_COUNT ? info[t].ctype : "?"; }
int dtype_size(DType t) { return t < DT_COUNT ? info[t].size : 0; }
int dtype_is_float(DType t) { return t >= DT_F16 && t <= DT_F64; }
int dtype_is_int(DType t) { return t == DT_I32 || t == DT_I64; }

DType dtype_promote(DType a, DType b)
{
    if ((a == DT_F16 && b == DT_BF16) || (a == DT_BF16 && b == DT_F16))
        return DT_F32;
    return a > b ? a : b;
}

int dtype_from_name(const char *s, DType *out)
{
    for (int i = 0; i < DT_COUNT; i++)
        if (strcmp(s, info[i].name) == 0) {
            *out = (DType)i;
            return 1;
        }
    return 0;
}
