/* NAME.h with HalideRuntime.h in either order, from C and from C++ (issue #22):
   include_order.cmake compiles this file with each of the modes below, as C
   and as C++, links it with the library and runs it.
     HALIDE_FIRST  HalideRuntime.h, then NAME.h
     DISCO_FIRST   NAME.h, then HalideRuntime.h (a redefinition of
                   halide_type_code_t before the fix)
     OWN_TYPES     NAME.h alone with DISCO_AOT_OWN_HALIDE_TYPES: its own copy
   The program uses Halide's runtime API where HalideRuntime.h was included and
   computes the output shape of layernorm_softmax for a made-up input. */
#if defined(HALIDE_FIRST)
#include "HalideRuntime.h"
#include "aot_layernorm_softmax.h"
#elif defined(DISCO_FIRST)
#include "aot_layernorm_softmax.h"
#include "HalideRuntime.h"
#elif defined(OWN_TYPES)
#define DISCO_AOT_OWN_HALIDE_TYPES 1
#include "aot_layernorm_softmax.h"
#else
#error "define HALIDE_FIRST, DISCO_FIRST or OWN_TYPES"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(OWN_TYPES) && (defined(HALIDE_HALIDERUNTIME_H) || !defined(DISCO_AOT_HALIDE_TYPES))
#error "DISCO_AOT_OWN_HALIDE_TYPES must give the header's own types"
#endif
#if !defined(OWN_TYPES) && (!defined(HALIDE_HALIDERUNTIME_H) || defined(DISCO_AOT_HALIDE_TYPES))
#error "with HalideRuntime.h on the include path, its types must be the only ones"
#endif

int main(void) {
  /* The input's extents from its declared dims: numbers as declared, symbols 3. */
  int64_t shape[8];
  int rank = 0;
  const char *p = aot_layernorm_softmax_input_dims[0] + 1;
  halide_dimension_t xd[8], yd[8];
  halide_buffer_t x, y;
  int i;
  while (*p && *p != ']' && rank < 8) {
    shape[rank++] = (*p >= '0' && *p <= '9') ? strtoll(p, NULL, 10) : 3;
    while (*p && *p != ',' && *p != ']') ++p;
    if (*p == ',') p += 2;
  }
  memset((void *)&x, 0, sizeof x); /* void *: C++ warns of memset on a struct with members */
  memset((void *)&y, 0, sizeof y);
  for (i = 0; i < rank; ++i) {
    xd[i].min = 0;
    xd[i].extent = (int32_t)shape[rank - 1 - i];
    xd[i].stride = i == 0 ? 1 : xd[i - 1].stride * xd[i - 1].extent;
    xd[i].flags = 0;
  }
  x.type.code = halide_type_float;
  x.type.bits = 32;
  x.type.lanes = 1;
  x.dimensions = rank;
  x.dim = xd;
  y.dim = yd;
  if (aot_layernorm_softmax_output_shapes(&x, &y) != 0) {
    fprintf(stderr, "FAIL: %s\n", aot_layernorm_softmax_last_error());
    return 1;
  }
  if (y.dimensions != aot_layernorm_softmax_output_ranks[0] || y.type.code != halide_type_float) {
    fprintf(stderr, "FAIL: output rank %d, type code %d\n", (int)y.dimensions, (int)y.type.code);
    return 1;
  }
#ifdef HALIDE_HALIDERUNTIME_H
  /* HalideRuntime.h's own API is all there, whichever header came first. */
  if (halide_error_code_success != 0 || halide_set_num_threads(0) < 0) return 1;
#ifdef __cplusplus
  if (!(x.type == halide_type_of<float>()) || y.number_of_elements() < 1) return 1;
#endif
#endif
  printf("ok: output rank %d\n", (int)y.dimensions);
  return 0;
}
