__global__ void Scale(float* data, float factor) {  // expected-error:17: 'Scale' is a __global__ function, but fragments cannot define kernels
  data[threadIdx.x] *= factor;
}
