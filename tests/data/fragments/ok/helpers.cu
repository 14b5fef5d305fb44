// Helper functions: with and without __device__ (fragments compile with
// NVRTC's -default-device), inline, templates, constants, globals.
namespace util {

__device__ __forceinline__ int Clamp(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// No __device__: still a device function.
long long Square(long long v) { return v * v; }

template <class T>
T Twice(T v) {
  return v + v;
}

constexpr int kBuckets = 8;

}  // namespace util

__constant__ float kWeights[util::kBuckets] = {1, 2, 3, 4, 5, 6, 7, 8};
__device__ unsigned long long g_events = 0;

static __device__ __noinline__ float Weight(int bucket) { return kWeights[util::Clamp(bucket, 0, util::kBuckets - 1)]; }

struct Sample { int bucket; long long value; };
struct Score { double score; };

struct RK_ACTOR Scorer {
  double total;
  long long squares;

  RK_HANDLER void on(const Sample& s, rk::Ctx& ctx) {
    squares += util::Square(s.value);
    total += util::Twice(Weight(s.bucket)) * s.value;
    atomicAdd(&g_events, 1ull);
    auto scaled = [](double v) { return v * 0.5; };
    ctx.reply(Score{scaled(total)});
  }
};
