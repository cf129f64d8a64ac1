/* The core's float32 FMA peak, for zoo_roofline.py: 12 independent chains of
 * 512-bit FMAs (enough to cover the latency of two FMA pipes), on THREADS
 * threads at once (argv[1], default 1); prints the sum of their GFLOP/s.
 * Build: cc -O2 -mavx512f -pthread fma_peak.c -o fma_peak */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *chains(void *out) {
  __m512 a[12];
  const __m512 b = _mm512_set1_ps(1.0000001f), c = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps((float)i);
  const long n = 100000000;
  const double t0 = seconds();
  for (long k = 0; k < n; k++) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++) a[i] = _mm512_fmadd_ps(a[i], b, c);
  }
  const double s = seconds() - t0;
  float sink = 0;
  for (int i = 0; i < 12; i++) sink += _mm512_reduce_add_ps(a[i]);
  volatile float keep = sink; /* the chains' results are used */
  (void)keep;
  *(double *)out = (double)n * 12 * 32 / s / 1e9;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1 && argv[1][0] == '-') {
    printf("usage: fma_peak [THREADS]\nGFLOP/s of 512-bit FMA chains on THREADS threads at once (default 1).\n");
    return 0;
  }
  const int threads = argc > 1 ? atoi(argv[1]) : 1;
  if (threads < 1 || threads > 256) {
    fprintf(stderr, "fma_peak: THREADS must be 1-256\n");
    return 2;
  }
  pthread_t t[256];
  double g[256], sum = 0;
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, chains, &g[i]);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL), sum += g[i];
  printf("%.1f\n", sum);
  return 0;
}
