// lowering/host_target.h: the host target holds no feature this CPU cannot
// run. On an AMD EPYC (Zen 4: AVX-512 with BF16, no FP16) Halide 14's own
// detection claims Sapphire Rapids, and kernels died of SIGILL (vmovw).
#include "lowering/host_target.h"

#include <cpuid.h>
#include <gtest/gtest.h>

namespace disco {
namespace {

using T = Halide::Target;

// Asked of cpuid itself: clang 14 (the sanitizer build's compiler) has neither
// "avx512fp16" nor "avx512bf16" for __builtin_cpu_supports. FP16 is leaf 7
// subleaf 0 EDX bit 23; BF16 is leaf 7 subleaf 1 EAX bit 5.
bool cpuid_has_avx512fp16_and_bf16() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !((d >> 23) & 1)) return false;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 5) & 1);
}

TEST(HostTarget, HoldsOnlyFeaturesTheCpuRuns) {
  __builtin_cpu_init();
  for (const T &t : {usable_host_target(), usable_jit_target()}) {
    if (t.arch != T::X86) GTEST_SKIP() << "not x86";
    if (t.has_feature(T::AVX)) {
      EXPECT_TRUE(__builtin_cpu_supports("avx")) << t.to_string();
    }
    if (t.has_feature(T::AVX2)) {
      EXPECT_TRUE(__builtin_cpu_supports("avx2")) << t.to_string();
    }
    if (t.has_feature(T::FMA)) {
      EXPECT_TRUE(__builtin_cpu_supports("fma")) << t.to_string();
    }
    if (t.has_feature(T::AVX512)) {
      EXPECT_TRUE(__builtin_cpu_supports("avx512f")) << t.to_string();
    }
    if (t.has_feature(T::AVX512_Skylake)) {
      EXPECT_TRUE(__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) << t.to_string();
    }
    if (t.has_feature(T::AVX512_SapphireRapids)) {
      EXPECT_TRUE(cpuid_has_avx512fp16_and_bf16()) << t.to_string();
    }
  }
}

TEST(HostTarget, KeepsWhatTheCpuHas) {
  __builtin_cpu_init();
  const T t = usable_host_target();
  if (t.arch != T::X86) GTEST_SKIP() << "not x86";
  EXPECT_EQ(t.has_feature(T::AVX2), __builtin_cpu_supports("avx2") != 0) << t.to_string();
}

}  // namespace
}  // namespace disco
