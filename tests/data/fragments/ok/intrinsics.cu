// A handler body that uses much of what NVRTC provides built in: built-in
// variables, shared memory, barriers, warp functions, bit intrinsics,
// atomics, math, fast intrinsics, conversions, vector types, printf, assert.
struct Work {
  float data[32];
  double weights[4];
  uint32_t seed;
  int64_t bias;
};
struct Result {
  float sum;
  double norm;
  unsigned long long ticks;
};

__device__ unsigned int g_counter;
__device__ float g_total;
__device__ double g_dtotal;
__device__ unsigned long long g_big;
__device__ int g_min;

struct RK_ACTOR Kitchen {
  float4 acc;
  int2 pair;
  size_t calls;

  RK_BLOCK_HANDLER void on(const Work& w, rk::Ctx& ctx) {
    __shared__ float tile[32];
    __shared__ int votes;
    const unsigned lane = threadIdx.x % warpSize;
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned grid = gridDim.x * blockDim.y * blockDim.z;
    tile[lane] = w.data[lane];
    __syncthreads();
    int n = __syncthreads_count(tile[lane] > 0.0f);
    if (__syncthreads_or(n > 3) && __syncthreads_and(1)) votes = n;

    const unsigned mask = __activemask();
    const unsigned ballot = __ballot_sync(mask, tile[lane] > 1.0f);
    float v = tile[lane];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    double dv = __shfl_sync(mask, static_cast<double>(v), 0);
    unsigned long long big = __shfl_xor_sync(mask, 1ull, 1);
    int up = __shfl_up_sync(mask, static_cast<int>(lane), 1, 16);
    unsigned peers = __match_any_sync(mask, static_cast<int>(lane & 3));
    int all_pred;
    __match_all_sync(mask, 7u, &all_pred);
    unsigned total_lanes = __reduce_add_sync(mask, 1u);
    int lowest = __reduce_min_sync(mask, static_cast<int>(lane));
    if (__any_sync(mask, up > 3) || __all_sync(mask, 1)) __syncwarp();
    __syncwarp(mask);

    int bits = __popc(ballot) + __popcll(big) + __clz(static_cast<int>(peers)) + __clzll(static_cast<long long>(big)) +
               __ffs(up) + __ffsll(1ll);
    unsigned r = __brev(ballot) ^ __byte_perm(ballot, peers, 0x3210) ^ __funnelshift_l(ballot, peers, 3) ^
                 __funnelshift_r(ballot, peers, 5) ^ static_cast<unsigned>(__brevll(big));
    unsigned hi = __umulhi(r, 3u) + static_cast<unsigned>(__mul64hi(5ll, 7ll)) + __usad(1u, 2u, 3u);

    atomicAdd(&g_counter, 1u);
    atomicAdd(&g_total, v);
    atomicAdd(&g_dtotal, dv);
    atomicAdd(&g_big, big);
    atomicSub(&g_counter, 1u);
    atomicMin(&g_min, lowest);
    atomicMax(&g_min, bits);
    atomicExch(&g_total, 0.0f);
    atomicCAS(&g_counter, 0u, hi);
    atomicCAS(&g_big, 0ull, 1ull);
    atomicInc(&g_counter, 100u);
    atomicDec(&g_counter, 100u);
    atomicAnd_block(&g_counter, 0xffu);
    atomicOr_system(&g_counter, 0x100u);
    atomicXor(&g_counter, r);
    atomicAdd_block(&g_min, 1);

    float f = sqrtf(fabsf(v)) + rsqrtf(2.0f) + cbrtf(8.0f) + expf(0.5f) + exp2f(1.0f) + exp10f(1.0f) + expm1f(0.1f) +
              logf(2.0f) + log2f(8.0f) + log10f(100.0f) + log1pf(0.5f) + powf(2.0f, 3.0f) + sinf(0.1f) +
              cosf(0.1f) + tanf(0.1f) + asinf(0.5f) + acosf(0.5f) + atanf(1.0f) + atan2f(1.0f, 2.0f) +
              sinhf(0.1f) + coshf(0.1f) + tanhf(0.1f) + fminf(1.0f, 2.0f) + fmaxf(1.0f, 2.0f) + floorf(1.5f) +
              ceilf(1.5f) + roundf(1.5f) + truncf(1.5f) + rintf(1.5f) + fmodf(5.0f, 3.0f) + fmaf(1.0f, 2.0f, 3.0f) +
              hypotf(3.0f, 4.0f) + erff(0.5f) + erfcf(0.5f) + lgammaf(3.0f) + tgammaf(3.0f) + copysignf(1.0f, -1.0f) +
              ldexpf(1.0f, 3) + nanf("") * 0.0f + normcdff(0.0f) + sinpif(0.5f);
    float s, c;
    sincosf(v, &s, &c);
    int e;
    f += frexpf(f, &e) + modff(f, &s);
    double d = sqrt(dv) + exp(1.0) + log(2.0) + pow(2.0, 0.5) + sin(dv) + cos(dv) + fabs(-dv) + fmin(1.0, dv) +
               fmax(1.0, dv) + fma(1.0, 2.0, dv) + floor(dv) + ceil(dv) + w.weights[0] * sqrt(2.0f);
    if (isnan(d) || isinf(f) || !isfinite(d) || signbit(f)) d = 0.0;
    float fast = __expf(v) + __logf(2.0f) + __sinf(v) + __cosf(v) + __powf(2.0f, v) + __fdividef(v, 3.0f) +
                 __saturatef(v) + __fmaf_rn(v, 2.0f, 1.0f) + __fadd_rn(v, 1.0f) + __fmul_rn(v, 2.0f) +
                 __fdiv_rn(v, 3.0f) + __frcp_rn(v) + __fsqrt_rn(2.0f) + __dadd_rn(d, 1.0) * 0.0f;

    int as_int = __float_as_int(fast) ^ __float2int_rn(f) ^ __double2int_rz(d) ^ __double2hiint(d);
    unsigned as_uint = __float_as_uint(fast) + __float2uint_rz(f);
    long long as_ll = __double_as_longlong(d) + __float2ll_rd(f) + __double2ll_rn(d);
    f += __int_as_float(as_int) + __uint_as_float(as_uint) + __int2float_rn(as_int) + __ll2float_rn(as_ll);
    d += __longlong_as_double(as_ll) + __int2double_rn(as_int) + __hiloint2double(1, 2);

    acc = make_float4(f, fast, static_cast<float>(d), v);
    pair = make_int2(min(as_int, 3), max(static_cast<int>(lane), 7));
    uint3 where = make_uint3(id, grid, 0);
    dim3 block = blockDim;
    float4 loaded = __ldg(&acc);
    float one = __ldg(&w.data[0]) + __ldcg(&w.data[1]) + loaded.x + static_cast<float>(block.x + where.y);
    __stcg(&tile[lane], one);
    unsigned long long mn = min(1ull, big) + max(2u, 3u) + umin(1u, 2u) + llmax(1ll, 2ll);
    float mf = fminf(INFINITY, one) + (isnan(NAN) ? 1.0f : 0.0f) + min(1.0f, 2.0f) + max(1.0, 2.0);

    int64_t wide = w.bias + static_cast<int64_t>(mn);
    uint8_t small = static_cast<uint8_t>(wide);
    int16_t mid = static_cast<int16_t>(small);
    uintptr_t address = reinterpret_cast<uintptr_t>(&tile[0]);
    ptrdiff_t distance = &tile[1] - &tile[0];
    memset(&tile[0], 0, sizeof(float));
    memcpy(&tile[1], &one, sizeof(one));

    unsigned simd = __vadd2(r, hi) ^ __vabsdiffu4(r, hi) ^ __vmaxs2(r, hi) ^ __vabs4(r) ^ __vcmpeq4(r, hi);
    int2 moved = std::move(pair);
    int list_total = 0;
    for (int x : {1, 2, 3}) list_total += x;
    std::initializer_list<float> weights = {1.0f, 2.0f};
    list_total += static_cast<int>(weights.size()) + moved.x + static_cast<int>(simd & 1u);

    const long long start = clock64();
    const clock_t coarse = clock();
    __nanosleep(100);
    __threadfence();
    __threadfence_block();
    __threadfence_system();
    assert(votes >= 0);
    if (ctx.leader()) {
      printf("lane %u bits %d mid %d address %lu distance %ld %f %d\n", lane, bits, mid,
             static_cast<unsigned long>(address), static_cast<long>(distance), static_cast<double>(mf), list_total);
      ++calls;
      ctx.reply(Result{f + fast, d, static_cast<unsigned long long>(clock64() - start + coarse) + total_lanes});
    }
  }
};
