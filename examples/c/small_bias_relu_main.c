/* small_bias_relu_main.c -- call the fused small_bias_relu of
 * examples/small_bias_relu.fuse from C.
 *
 *   fn small_bias_relu(x: f32[N, M], b: f32[M]) -> f32[N, M]     relu(x + b)
 *
 * The same program as bias_relu, for the latency-bound benchmark case
 * small_bias_relu: at this size the host side of the call (argument checks,
 * one launch) is most of the cost.  The driver is bias_relu_main.c's, under
 * this name and at this default size.
 *
 *   small_bias_relu_main [N [M]]        (default 63 x 1021)
 * Exit status: 0 when the check passes, 1 otherwise (or on an error). */
#define BR_FN small_bias_relu
#define BR_HEADER "small_bias_relu.h"
#define BR_DEFAULT_N 63
#define BR_DEFAULT_M 1021
#include "bias_relu_main.c"
