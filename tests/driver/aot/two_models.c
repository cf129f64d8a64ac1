/* Two disco libraries in one C program (no C++ runtime): their Halide runtimes
   are weak, their symbols prefixed, and errors of either are reported without
   aborting. Runs layernorm_softmax and convnet (both bundled) on inputs of a
   shape made from the declared dims (numbers as declared, symbols a given
   value), checks that the outputs are finite, then a bad call to each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_layernorm_softmax.h"
#include "aot_convnet.h"

/* Extents from "[N, 3, H, W]": numbers as declared, symbols `sym`. */
static int parse_dims(const char *dims, int64_t *shape, int64_t sym) {
  int rank = 0;
  const char *p = dims + 1;
  while (*p && *p != ']') {
    shape[rank++] = (*p >= '0' && *p <= '9') ? strtoll(p, NULL, 10) : sym;
    while (*p && *p != ',' && *p != ']') ++p;
    if (*p == ',') p += 2;
  }
  return rank;
}

static void set_view(halide_buffer_t *b, halide_dimension_t *d, void *host, const int64_t *shape, int rank) {
  int32_t stride = 1;
  memset(b, 0, sizeof *b);
  for (int i = 0; i < rank; ++i) {
    d[i].min = 0;
    d[i].extent = (int32_t)shape[rank - 1 - i];
    d[i].stride = stride;
    d[i].flags = 0;
    stride *= d[i].extent;
  }
  b->host = (uint8_t *)host;
  b->type.code = halide_type_float;
  b->type.bits = 32;
  b->type.lanes = 1;
  b->dimensions = rank;
  b->dim = d;
}

typedef int (*fn_t)(const halide_buffer_t *, halide_buffer_t *);

static int try_model(const char *name, const char *in_dims, int sym, fn_t shapes, fn_t run, const char *(*err)(void)) {
  int64_t shape[8];
  const int rank = parse_dims(in_dims, shape, sym);
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= shape[i];
  float *x = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i) x[i] = (float)((i % 17) - 8) / 8.0f;
  halide_dimension_t xd[8], yd[8];
  halide_buffer_t xb, yb;
  set_view(&xb, xd, x, shape, rank);
  memset(&yb, 0, sizeof yb);
  yb.dim = yd;
  if (shapes(&xb, &yb) != 0) return printf("FAIL: %s output_shapes: %s\n", name, err()), 1;
  int64_t m = 1;
  for (int i = 0; i < yb.dimensions; ++i) m *= yb.dim[i].extent;
  float *y = malloc(sizeof(float) * m);
  yb.host = (uint8_t *)y;
  if (run(&xb, &yb) != 0) return printf("FAIL: %s run: %s\n", name, err()), 1;
  for (int64_t i = 0; i < m; ++i)
    if (!isfinite(y[i])) return printf("FAIL: %s output %lld is not finite\n", name, (long long)i), 1;
  xb.type.bits = 64; /* float64: the wrong dtype */
  if (run(&xb, &yb) == 0 || !strstr(err(), "dtype float64, expected float32"))
    return printf("FAIL: %s accepted float64 input (%s)\n", name, err()), 1;
  printf("ok: %s %s -> %lld outputs; bad dtype -> %s\n", name, in_dims, (long long)m, err());
  free(x);
  free(y);
  return 0;
}

int main(void) {
  int failed = 0;
  failed |= try_model("aot_layernorm_softmax", aot_layernorm_softmax_input_dims[0], 2, aot_layernorm_softmax_output_shapes,
                      aot_layernorm_softmax_run, aot_layernorm_softmax_last_error);
  failed |= try_model("aot_convnet", aot_convnet_input_dims[0], 16, aot_convnet_output_shapes, aot_convnet_run,
                      aot_convnet_last_error);
  return failed;
}
