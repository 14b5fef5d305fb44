// probe_common.h: what every standalone probe under bench/probes/ shares:
// CK (stop with the CUDA error and its line) and the device line each prints.
// For nvcc (scripts/build_probes.sh builds every probe).
#ifndef RINGKERNEL_BENCH_PROBES_PROBE_COMMON_H_
#define RINGKERNEL_BENCH_PROBES_PROBE_COMMON_H_

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                            \
  do {                                                                   \
    cudaError_t e = (x);                                                 \
    if (e != cudaSuccess) {                                              \
      printf("error %s at line %d\n", cudaGetErrorString(e), __LINE__);  \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

// Device 0: its name and SM clock (printed), and the dynamic shared memory
// that keeps a block alone on its SM (more than half of an SM's).
struct ProbeDevice {
  cudaDeviceProp prop;
  double ghz;           // the SM clock the device reports (cycles -> ns)
  size_t smem_alone;    // a block asking for this much has an SM to itself
};
inline ProbeDevice OpenProbeDevice() {
  ProbeDevice d;
  CK(cudaGetDeviceProperties(&d.prop, 0));
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  d.ghz = clock_khz / 1e6;
  d.smem_alone = d.prop.sharedMemPerMultiprocessor / 2 + 1024;
  if (d.smem_alone > d.prop.sharedMemPerBlockOptin) d.smem_alone = d.prop.sharedMemPerBlockOptin;
  printf("device %s, SM clock %.3f GHz (reported)\n", d.prop.name, d.ghz);
  return d;
}

#endif  // RINGKERNEL_BENCH_PROBES_PROBE_COMMON_H_
