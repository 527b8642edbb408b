/* multi_gpu_glue.c -- built once per target, beside that target's
 * multi_gpu.h: MG_TABLE (mg_cuda or mg_nvrtc) lists its functions.  The
 * nvrtc build renames them (-include multi_gpu_rtc_names.h, as for the
 * generated .c) so that both targets link into one program. */
#include "multi_gpu.h"
#include "multi_gpu_fns.h"

const mg_fns MG_TABLE = {MG_TARGET, softmax, sum_abs, colsum, bias_relu};
