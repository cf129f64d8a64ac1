// Views that a oneDNN matmul step reads and writes in place instead of
// having them copied: bert's attention reshapes and transposes Q, K and V
// before its MatMuls and the context after, and each of those is only a
// different set of strides over a dense buffer.
//
//  - An operand view: the step's input T (dense), then an optional Reshape of
//    it, then a Transpose. The Reshape's dims travel as tokens: "in<i>" (T's
//    dim i at run time), a constant, or "rest" (what is left of T's elements).
//  - A result view: the matmul's result, Transposed (then maybe Reshaped,
//    which on a dense buffer changes nothing) into the step's dense output.
//
// In the plan: "<a|b>_reshape" (tokens, comma separated; empty: no Reshape),
// "<a|b>_perm" and "out_perm" (absent or empty: no view), "out_reshaped".
// This header has no oneDNN in it: the rules write views, the glue reads them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace disco {

// A tensor as a primitive sees it: logical dims and each one's stride in elements.
struct StridedDims {
  std::vector<int64_t> dims, strides;
};

// Row-major strides of `dims`.
StridedDims dense_layout(const std::vector<int64_t> &dims);

struct OperandView {
  std::vector<std::string> reshape;  // empty: the Transpose reads T itself
  std::vector<int64_t> perm;         // empty: no view

  bool present() const { return !perm.empty(); }
  // The operand read from a dense T of `shape`. Throws disco::Error naming
  // `what` when the run-time shape does not fit the Reshape.
  StridedDims apply(const std::vector<int64_t> &shape, const std::string &what) const;
};

// A result of logical `dims` written transposed by `perm` into a dense buffer:
// element (i0, i1, ...) lands where the Transpose puts it.
StridedDims scattered_layout(const std::vector<int64_t> &dims, const std::vector<int64_t> &perm);

// The dims after the Transpose: dims[perm[0]], dims[perm[1]], ...
std::vector<int64_t> permuted(const std::vector<int64_t> &dims, const std::vector<int64_t> &perm);

// True when perm holds each of 0 .. size-1 once.
bool is_permutation(const std::vector<int64_t> &perm);

// Copies a dense row-major tensor of layout.dims into `dst` laid out as `layout`.
void copy_to_layout(const float *dense, float *dst, const StridedDims &layout);

// Writes `src` of `src_dims` (padded with leading 1s to the rank of `dims`,
// each 1 or equal to that dim of `dims`) broadcast to a dense row-major
// tensor of `dims`: a post-op operand that oneDNN cannot read broadcast.
void broadcast_to_dense(const float *src, const std::vector<int64_t> &src_dims, const std::vector<int64_t> &dims,
                        float *dense);

// Throws disco::Error naming `where` on a malformed token or perm.
void validate_view(const OperandView &v, const std::string &where);
std::string join_tokens(const std::vector<std::string> &tokens);

}  // namespace disco
