/* A C entry to the backends' runtime glue (runtime/extern_kernel.h), for the
 * C drivers of AOT libraries (driver/aot/): a plan step with `extern_call`
 * set (oneDNN's matmul, a Vitis AI region, ...) is created once from its call
 * name and params, and run with plain pointers and extents. Errors come back
 * as text in the caller's buffer, never as C++ exceptions.
 *
 * A step may run from several threads at once: each run takes a kernel object
 * of its own from the step's pool (made on first need; extern kernels keep
 * per-shape state, so one object never runs twice at the same time), and
 * returns it when done. Weights stay with the caller, read-only. */
#ifndef DISCO_EXTERN_C_ABI_H
#define DISCO_EXTERN_C_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct disco_extern_tensor {
  void *data;            /* NULL for an omitted optional input */
  int32_t dtype;         /* disco::DType's value (frontend/dtype.h) */
  int32_t rank;
  const int64_t *shape;  /* ONNX dim order; row-major, dense */
  int32_t constant;      /* a weight: the same data at the same address on every run */
} disco_extern_tensor;

typedef struct disco_extern_step disco_extern_step;

/* The step that plan step `label` describes; NULL with a message in `error`
 * when no glue linked into the program provides `call` or its params are bad. */
disco_extern_step *disco_extern_create(const char *call, const char *label, int n_params, const char *const *keys,
                                       const char *const *values, char *error, size_t error_size);

/* Runs the step. `symbols`: every symbol bound so far, by name. num_threads > 0
 * sets the threads the kernel may use. Returns 0, or non-zero with a message. */
int disco_extern_run(disco_extern_step *step, int n_inputs, const disco_extern_tensor *inputs, int n_outputs,
                     const disco_extern_tensor *outputs, int n_symbols, const char *const *symbol_names,
                     const int64_t *symbol_values, int num_threads, char *error, size_t error_size);

/* Frees the step and its kernel objects; no run may be in flight. */
void disco_extern_destroy(disco_extern_step *step);

#ifdef __cplusplus
}
#endif

#endif
