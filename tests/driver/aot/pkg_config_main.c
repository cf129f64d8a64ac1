/* Linked through pkg-config only (pkg_config.cmake): `cc pkg_config_main.c
   $(pkg-config --cflags --libs aot_layernorm_softmax)`. Runs the library on a
   PyTorch input (.npy, float32, C order) and compares the output with
   PyTorch's (rtol 1e-4, atol 1e-5).  usage: pkg_config_main IN.npy REF.npy
   Another library: -DPC_NAME=NAME -DPC_HEADER='"NAME.h"'. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PC_NAME
#define PC_NAME aot_layernorm_softmax
#define PC_HEADER "aot_layernorm_softmax.h"
#endif
#define PC_CAT_(a, b) a##b
#define PC_CAT(a, b) PC_CAT_(a, b)
#define PC_FN(suffix) PC_CAT(PC_NAME, suffix)
#include PC_HEADER

struct npy {
  int rank;
  int64_t shape[8], n;
  float *data;
};

/* Reads a version-1 .npy of float32 ('<f4', C order); 0 on success. */
static int read_npy(const char *path, struct npy *a) {
  FILE *f = fopen(path, "rb");
  unsigned char head[10];
  char text[1024];
  const char *p;
  size_t len;
  memset(a, 0, sizeof *a);
  if (!f || fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0 || head[6] != 1) return -1;
  len = (size_t)head[8] | (size_t)head[9] << 8;
  if (len >= sizeof text || fread(text, 1, len, f) != len) return -1;
  text[len] = 0;
  if (!strstr(text, "'descr': '<f4'") || !strstr(text, "'fortran_order': False")) return -1;
  p = strchr(strstr(text, "'shape'"), '(') + 1;
  a->n = 1;
  while (*p != ')' && a->rank < 8) {
    a->shape[a->rank] = strtoll(p, (char **)&p, 10);
    a->n *= a->shape[a->rank++];
    while (*p == ',' || *p == ' ') ++p;
  }
  a->data = (float *)malloc((size_t)a->n * sizeof(float) + 1);
  if (!a->data || fread(a->data, sizeof(float), (size_t)a->n, f) != (size_t)a->n) return -1;
  fclose(f);
  return 0;
}

int main(int argc, char **argv) {
  struct npy in, ref;
  halide_dimension_t xd[8], yd[8];
  halide_buffer_t x, y;
  float *out;
  int i;
  int64_t k, n = 1;
  double worst = 0;
  if (argc != 3 || read_npy(argv[1], &in) != 0 || read_npy(argv[2], &ref) != 0) {
    fprintf(stderr, "FAIL: usage: %s IN.npy REF.npy (float32 .npy files)\n", argv[0]);
    return 2;
  }
  memset(&x, 0, sizeof x);
  memset(&y, 0, sizeof y);
  for (i = 0; i < in.rank; ++i) { /* Halide's dim 0 is the last ONNX dim */
    xd[i].min = 0;
    xd[i].extent = (int32_t)in.shape[in.rank - 1 - i];
    xd[i].stride = i == 0 ? 1 : xd[i - 1].stride * xd[i - 1].extent;
    xd[i].flags = 0;
  }
  x.host = (uint8_t *)in.data;
  x.type.code = halide_type_float;
  x.type.bits = 32;
  x.type.lanes = 1;
  x.dimensions = in.rank;
  x.dim = xd;
  y.dim = yd;
  if (PC_FN(_output_shapes)(&x, &y) != 0) {
    fprintf(stderr, "FAIL: %s\n", PC_FN(_last_error)());
    return 1;
  }
  if (y.dimensions != ref.rank) {
    fprintf(stderr, "FAIL: output rank %d, reference rank %d\n", (int)y.dimensions, ref.rank);
    return 1;
  }
  for (i = 0; i < ref.rank; ++i) {
    if (y.dim[i].extent != ref.shape[ref.rank - 1 - i]) {
      fprintf(stderr, "FAIL: output dim %d is %d, reference %lld\n", ref.rank - 1 - i, (int)y.dim[i].extent,
              (long long)ref.shape[ref.rank - 1 - i]);
      return 1;
    }
    n *= y.dim[i].extent;
  }
  out = (float *)malloc((size_t)n * sizeof(float) + 1);
  y.host = (uint8_t *)out;
  if (PC_FN(_run)(&x, &y) != 0) {
    fprintf(stderr, "FAIL: %s\n", PC_FN(_last_error)());
    return 1;
  }
  for (k = 0; k < n; ++k) {
    const double excess = fabs((double)out[k] - ref.data[k]) / (1e-5 + 1e-4 * fabs((double)ref.data[k]));
    if (!(excess <= worst)) worst = excess; /* NaN counts as the worst */
  }
  if (!(worst <= 1.0)) {
    fprintf(stderr, "FAIL: the output is %.3g x the tolerance away from PyTorch's\n", worst);
    return 1;
  }
  printf("ok: %lld outputs match PyTorch's (worst %.3g of the tolerance)\n", (long long)n, worst);
  return 0;
}
