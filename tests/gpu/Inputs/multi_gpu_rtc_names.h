/* multi_gpu_rtc_names.h -- the nvrtc target's functions of multi_gpu.fuse
 * under names of their own (rtc_...), so that they link beside the cuda
 * target's: force-included into the generated .c and its glue. */
#define softmax rtc_softmax
#define softmax_ws rtc_softmax_ws
#define softmax_workspace_size rtc_softmax_workspace_size
#define softmax_packed rtc_softmax_packed
#define softmax_kernel_count rtc_softmax_kernel_count
#define sum_abs rtc_sum_abs
#define sum_abs_ws rtc_sum_abs_ws
#define sum_abs_workspace_size rtc_sum_abs_workspace_size
#define sum_abs_packed rtc_sum_abs_packed
#define sum_abs_kernel_count rtc_sum_abs_kernel_count
#define colsum rtc_colsum
#define colsum_ws rtc_colsum_ws
#define colsum_workspace_size rtc_colsum_workspace_size
#define colsum_packed rtc_colsum_packed
#define colsum_kernel_count rtc_colsum_kernel_count
#define bias_relu rtc_bias_relu
#define bias_relu_ws rtc_bias_relu_ws
#define bias_relu_workspace_size rtc_bias_relu_workspace_size
#define bias_relu_packed rtc_bias_relu_packed
#define bias_relu_kernel_count rtc_bias_relu_kernel_count
