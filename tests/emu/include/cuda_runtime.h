/* cuda_runtime.h -- stand-in for the CPU emulator: the generated .cu
 * includes <cuda_runtime.h>; with -I tests/emu/include it gets fz_emu.h
 * (normally force-included already, so this is a no-op). */
#include "../fz_emu.h"
