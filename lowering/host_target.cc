#include "lowering/host_target.h"

#include <cpuid.h>

#include <cstdlib>

namespace disco {

namespace {

using T = Halide::Target;

Halide::Target without(Halide::Target t, std::initializer_list<T::Feature> features) {
  for (T::Feature f : features) t = t.without_feature(f);
  return t;
}

// AVX512-FP16 is cpuid leaf 7, EDX bit 23. Asked directly: clang 14 (the
// fuzz build's compiler) has no "avx512fp16" for __builtin_cpu_supports.
bool cpu_has_avx512fp16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((d >> 23) & 1);
}

}  // namespace

Halide::Target usable_host_target() {
  Halide::Target t = Halide::get_host_target();
  if (t.arch != T::X86) return t;
  __builtin_cpu_init();
  const auto avx512 = {T::AVX512, T::AVX512_KNL, T::AVX512_Skylake, T::AVX512_Cannonlake, T::AVX512_SapphireRapids};
  if (!__builtin_cpu_supports("avx")) t = without(t, {T::AVX, T::AVX2, T::FMA, T::F16C});
  if (!__builtin_cpu_supports("avx2")) t = without(t, {T::AVX2});
  if (!__builtin_cpu_supports("fma")) t = without(t, {T::FMA});
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("avx512f")) t = without(t, avx512);
  if (!__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl"))
    t = without(t, {T::AVX512_Skylake, T::AVX512_Cannonlake, T::AVX512_SapphireRapids});
  // Halide 14 gives AMD Zen 4 (AVX-512 BF16 and VNNI, no FP16) its Sapphire
  // Rapids feature, under which LLVM emits AVX512-FP16 instructions (vmovw).
  if (!__builtin_cpu_supports("avx512bf16") || !__builtin_cpu_supports("avx512vnni") ||
      !cpu_has_avx512fp16())
    t = without(t, {T::AVX512_SapphireRapids});
  return t;
}

Halide::Target usable_jit_target() {
  if (const char *env = std::getenv("HL_JIT_TARGET"); env && *env) return Halide::get_jit_target_from_environment();
  return usable_host_target().with_feature(T::JIT);
}

}  // namespace disco
