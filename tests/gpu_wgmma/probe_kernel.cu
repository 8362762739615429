// nvcc -cubin -arch=sm_90a -std=c++17 -I include tests/gpu_wgmma/probe_kernel.cu -o probe.cubin
#include "probe_kernel.cuh"
