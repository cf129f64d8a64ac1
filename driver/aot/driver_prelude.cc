#include "driver/aot/driver_prelude.h"

namespace disco::aot {

// Kept in C so that the archive needs no C++ runtime. Every function is
// static except the two weak ones shared by all disco models in a program.
const char *const kDriverPrelude = R"PRELUDE(
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*disco_halide_handler_t)(void *, const char *);
extern disco_halide_handler_t halide_set_error_handler(disco_halide_handler_t);
extern int halide_set_num_threads(int);
extern void halide_shutdown_thread_pool(void);

/* Halide's messages go here instead of stderr (and never abort). Weak: every
   disco model of a program shares one copy, so whichever model installed the
   handler, the message lands in the calling thread's buffer. */
__attribute__((weak)) char *disco_aot_halide_message(void) {
  static __thread char text[1024];
  return text;
}
__attribute__((weak)) void disco_aot_halide_error(void *user_context, const char *msg) {
  (void)user_context;
  char *t = disco_aot_halide_message();
  size_t n = strlen(t);
  if (n < 1023) snprintf(t + n, 1024 - n, "%s", msg);
  n = strlen(t);
  while (n > 0 && t[n - 1] == '\n') t[--n] = 0;
}

/* Held shared by every run of every disco library of the process (weak: one
   copy), and alone by set_num_threads while it restarts Halide's thread pool. */
__attribute__((weak)) pthread_rwlock_t *disco_aot_pool_lock(void) {
  static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
  return &lock;
}

static __thread char g_error[2048];
static __thread int g_div0;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void disco_install(void) { halide_set_error_handler(disco_aot_halide_error); }

static int disco_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error, sizeof g_error, fmt, ap);
  va_end(ap);
  return -1;
}

/* Halide 14's pool starts workers up to the thread count but never stops them:
   with a lower count they would go on taking tasks. So a lower count restarts
   the pool, when no disco run is in flight (else it applies to the threads
   started from then on). Returns the previous count. */
static int disco_set_num_threads(int n) {
  int old;
  pthread_once(&g_once, disco_install);
  if (n < 0) return disco_fail("set_num_threads(%d): the thread count must be >= 0 (0: the default)", n);
  g_error[0] = 0;
  old = halide_set_num_threads(n);
  if (old > 0 && halide_set_num_threads(n) < old && pthread_rwlock_trywrlock(disco_aot_pool_lock()) == 0) {
    halide_shutdown_thread_pool();
    halide_set_num_threads(n); /* the shutdown forgets the count */
    pthread_rwlock_unlock(disco_aot_pool_lock());
  }
  return old;
}

static int64_t disco_fdiv(int64_t a, int64_t b) {
  if (b == 0) {
    g_div0 = 1;
    return 0;
  }
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
static int64_t disco_fmod(int64_t a, int64_t b) { return b == 0 ? (g_div0 = 1, 0) : a - disco_fdiv(a, b) * b; }
static int64_t disco_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t disco_max(int64_t a, int64_t b) { return a > b ? a : b; }

static void disco_type_text(const struct halide_type_t *t, char *out, size_t n) {
  if (t->lanes != 1) snprintf(out, n, "a vector type (%d lanes)", (int)t->lanes);
  else if (t->code == halide_type_uint && t->bits == 1) snprintf(out, n, "bool");
  else if (t->code == halide_type_int) snprintf(out, n, "int%d", (int)t->bits);
  else if (t->code == halide_type_uint) snprintf(out, n, "uint%d", (int)t->bits);
  else if (t->code == halide_type_float) snprintf(out, n, "float%d", (int)t->bits);
  else if (t->code == halide_type_bfloat) snprintf(out, n, "bfloat%d", (int)t->bits);
  else snprintf(out, n, "type code %d", (int)t->code);
}

/* Checks an argument's rank, type and layout (dense row-major, min 0) and
   gives its extents in ONNX order (outermost first). `what` is "input 'x'". */
static int disco_check_arg(const halide_buffer_t *b, const char *what, int rank, int code, int bits,
                           const char *dtype, int64_t *extents) {
  if (!b) return disco_fail("%s is a null pointer", what);
  if (b->dimensions != rank) return disco_fail("%s has rank %d, expected rank %d", what, (int)b->dimensions, rank);
  if (rank > 0 && !b->dim) return disco_fail("%s has rank %d but no dim array", what, rank);
  if (b->type.code != code || b->type.bits != bits || b->type.lanes != 1) {
    char got[32];
    disco_type_text(&b->type, got, sizeof got);
    return disco_fail("%s has dtype %s, expected %s", what, got, dtype);
  }
  int64_t stride = 1;
  for (int i = 0; i < rank; ++i) {
    const halide_dimension_t *d = &b->dim[i];
    const int onnx_dim = rank - 1 - i;
    if (d->extent < 0) return disco_fail("%s dim %d is %d, expected a size >= 0", what, onnx_dim, (int)d->extent);
    if (d->min != 0) return disco_fail("%s dim %d has min %d; disco needs min 0", what, onnx_dim, (int)d->min);
    if (d->extent > 1 && d->stride != stride)
      return disco_fail("%s dim %d has stride %d, expected %lld (dense, row-major)", what, onnx_dim, (int)d->stride,
                        (long long)stride);
    extents[onnx_dim] = d->extent;
    stride *= d->extent;
  }
  return 0;
}

static int disco_check_host(const halide_buffer_t *b, const char *what, int64_t elements) {
  if (elements > 0 && !b->host) return disco_fail("%s has no host memory (host is null)", what);
  if (b->device && b->device_interface) return disco_fail("%s lives on a device; disco needs host memory", what);
  return 0;
}

static int disco_check_sizes(const int64_t *shape, int rank, const char *buffer) {
  for (int d = 0; d < rank; ++d)
    if (shape[d] < 0 || shape[d] >= ((int64_t)1 << 31))
      return disco_fail("buffer '%s' dim %d evaluates to %lld, outside [0, 2^31)", buffer, d, (long long)shape[d]);
  return 0;
}

static int64_t disco_elements(const int64_t *shape, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[d];
  return n;
}

/* An input whose memory overlaps an output's (a model state updated in place:
 * the caller passes one buffer as both h and h_out) is read from a copy, as
 * the run may write the output before it has read all of the input. `bytes`
 * holds the inputs' byte sizes, then the outputs'. The copies go in `own`
 * (freed by the caller), their buffers in `copies`, and inx[i] points at the
 * buffer to read input i from. */
static int disco_unalias_inputs(const halide_buffer_t *const *in, int n_in, halide_buffer_t *const *out, int n_out,
                                const int64_t *bytes, const halide_buffer_t **inx, halide_buffer_t *copies,
                                void **own) {
  for (int i = 0; i < n_in; ++i) own[i] = NULL;  /* the caller frees them all, after a failure too */
  for (int i = 0; i < n_in; ++i) {
    const uint8_t *a = in[i]->host;
    inx[i] = in[i];
    for (int j = 0; j < n_out && bytes[i] > 0; ++j) {
      const uint8_t *b = out[j]->host;
      if (!b || bytes[n_in + j] == 0 || a >= b + bytes[n_in + j] || b >= a + bytes[i]) continue;
      own[i] = malloc((size_t)bytes[i]);
      if (!own[i]) return disco_fail("cannot allocate a copy of input %d, which shares memory with output %d", i, j);
      memcpy(own[i], a, (size_t)bytes[i]);
      copies[i] = *in[i];
      copies[i].host = (uint8_t *)own[i];
      inx[i] = &copies[i];
      break;
    }
  }
  return 0;
}

/* Dense row-major dims for `shape` in ONNX order (Halide's dim 0 is innermost). */
static void disco_set_dims(halide_dimension_t *dims, const int64_t *shape, int rank) {
  int64_t stride = 1;
  for (int i = 0; i < rank; ++i) {
    dims[i].min = 0;
    dims[i].extent = (int32_t)shape[rank - 1 - i];
    dims[i].stride = (int32_t)stride;
    dims[i].flags = 0;
    stride *= shape[rank - 1 - i];
  }
}

static uint8_t g_empty_storage[64];  /* what empty buffers point at: Halide wants a host pointer */

static void disco_set_buffer(halide_buffer_t *b, halide_dimension_t *dims, const void *host, int code, int bits,
                             const int64_t *shape, int rank) {
  memset(b, 0, sizeof *b);
  disco_set_dims(dims, shape, rank);
  b->host = (uint8_t *)(host ? host : g_empty_storage);
  b->type.code = (uint8_t)code;
  b->type.bits = (uint8_t)bits;
  b->type.lanes = 1;
  b->dimensions = rank;
  b->dim = dims;
}

/* The temporaries' memory of one run in flight. Runs take an arena from a pool
   and give it back afterwards, so that concurrent runs never share scratch
   memory while the weights (read-only) are shared. A pool rather than one arena
   per thread (thread-local): memory grows with the most runs ever in flight at
   once, not with every thread that ever called; nothing leaks when a thread
   exits; and release_memory, from any thread, can reach every idle arena. The
   lock is held for a pointer swap, twice a run; the last arena given back is
   the next one taken, so a lone caller keeps reusing the same warm memory. */
struct disco_arena {
  uint8_t *mem;
  int64_t cap;
  int laid_out;
  unsigned generation;       /* g_generation when taken */
  struct disco_arena *next;  /* in the pool */
  int64_t slots[];           /* the temporaries' bytes, then their offsets, as laid out */
};
static struct disco_arena *g_pool;  /* idle arenas */
static unsigned g_generation;       /* bumped by release_memory */
static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;

static struct disco_arena *disco_take_arena(int temps) {
  struct disco_arena *a;
  unsigned generation;
  pthread_mutex_lock(&g_pool_mu);
  a = g_pool;
  if (a) g_pool = a->next;
  generation = g_generation;
  pthread_mutex_unlock(&g_pool_mu);
  if (!a && !(a = (struct disco_arena *)calloc(1, sizeof *a + 2 * (size_t)temps * sizeof(int64_t)))) return NULL;
  a->generation = generation;
  return a;
}

static void disco_free_arena(struct disco_arena *a) {
  free(a->mem);
  free(a);
}

/* Back to the pool, or freed when release_memory ran since it was taken. */
static void disco_give_back(struct disco_arena *a) {
  int keep;
  pthread_mutex_lock(&g_pool_mu);
  keep = a->generation == g_generation;
  if (keep) {
    a->next = g_pool;
    g_pool = a;
  }
  pthread_mutex_unlock(&g_pool_mu);
  if (!keep) disco_free_arena(a);
}

/* Frees the idle arenas now and those of runs in flight when they end. */
static void disco_release_arenas(void) {
  struct disco_arena *a;
  pthread_mutex_lock(&g_pool_mu);
  a = g_pool;
  g_pool = NULL;
  ++g_generation;
  pthread_mutex_unlock(&g_pool_mu);
  while (a) {
    struct disco_arena *next = a->next;
    disco_free_arena(a);
    a = next;
  }
}

/* Arena placement (as runtime/memory_plan.cc): largest first, ties by first
   use, each temp at the lowest 64-byte aligned offset that overlaps no placed
   temp alive at the same time. Returns the arena size. */
struct disco_life {
  int first, last;
};
static int64_t disco_place(int n, const struct disco_life *life, const int64_t *bytes, int64_t *offset, int *order,
                           int64_t *begin, int64_t *end) {
  for (int i = 0; i < n; ++i) order[i] = i;
  for (int i = 1; i < n; ++i) {
    int v = order[i], j = i;
    while (j > 0) {
      int u = order[j - 1];
      int later = bytes[u] < bytes[v] || (bytes[u] == bytes[v] && life[u].first > life[v].first);
      if (!later) break;
      order[j] = u;
      --j;
    }
    order[j] = v;
  }
  int64_t total = 0;
  for (int k = 0; k < n; ++k) {
    const int t = order[k];
    const int64_t size = ((bytes[t] > 1 ? bytes[t] : 1) + 63) / 64 * 64;
    int64_t at = 0;
    for (int moved = 1; moved;) {  /* lowest offset clear of every overlapping live temp */
      moved = 0;
      for (int p = 0; p < k; ++p) {
        const int o = order[p];
        if (life[o].first > life[t].last || life[t].first > life[o].last) continue;
        if (at < end[o] && begin[o] < at + size) {
          at = end[o];
          moved = 1;
        }
      }
    }
    begin[t] = at;
    end[t] = at + size;
    offset[t] = at;
    if (at + size > total) total = at + size;
  }
  return total;
}
)PRELUDE";

}  // namespace disco::aot
