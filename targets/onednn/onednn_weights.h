// Constant weights reordered into the layout a primitive wants, kept once per
// process for each content and layout, on transparent huge pages where large.
// A model loaded twice (a dynamic and a static compile, the variants of
// --hint, one session per thread) packs its weights once and every copy reads
// the same memory: which cache sets a matrix falls in depends on where it
// lies, and on this VM two copies of mlp's 2 MiB of weights in one process
// ran 0.82-1.15x as fast as each other.
#pragma once
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>

namespace disco {

// The weights at `data` (laid out as `user`) reordered into `want` on
// `stream`, or the copy made earlier for the same bytes and layouts; kept
// while some primitive holds it. Thread-safe.
std::shared_ptr<dnnl::memory> shared_packed_weights(const dnnl::memory::desc &user, const void *data,
                                                    const dnnl::memory::desc &want, dnnl::stream &stream);

}  // namespace disco
