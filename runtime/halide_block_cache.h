// Memory for Halide kernels' heap allocations, kept between calls.
//
// A kernel that computes a large stage at root (a Resize's first pass, a
// recurrent kernel's projection) asks Halide's runtime for that memory on
// every call, and glibc serves large requests with fresh mmap pages: every
// page is faulted in and zeroed again on every run. A bilinear 2x Resize of
// [16, 64, 64, 64] faulted 8,193 pages (33.5 MB) a run, about a quarter of
// its time. Installed into a kernel library (KernelLibrary), these keep
// freed blocks of 64 KiB and more and hand them out again for requests of
// the same rounded size, up to 512 MiB in all; smaller requests go
// to the C library as before. Thread-safe (kernels allocate inside parallel
// loops). Each library's runtime is its own, so nothing outside the kernels
// changes.
#pragma once

#include <cstddef>

namespace disco {

// halide_malloc_t / halide_free_t for a kernel library's runtime. Blocks are
// 128-byte aligned, as Halide's own malloc aligns them.
void *halide_block_malloc(void *user_context, size_t bytes);
void halide_block_free(void *user_context, void *ptr);

// Bytes held in the cache now (for tests), and dropping them all.
size_t halide_block_cache_bytes();
void halide_block_cache_clear();

}  // namespace disco
