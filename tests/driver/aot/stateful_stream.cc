// A stateful model through the C API of its AOT library (issue #24 point 4):
// tests/references/stateful/stream_lstm.onnx takes int64 token ids, an LSTM's
// state (h, c) and a scalar float temperature, and returns the new state. The
// caller feeds each call's h_out and c_out back as the next call's h and c,
// and every chunk's outputs must match PyTorch's, whose state was carried the
// same way (make_stateful_references.py).
//
//   stateful_stream REFDIR pingpong   state in two buffer pairs, swapped per call
//   stateful_stream REFDIR inplace    one buffer per state, passed as both the
//                                     input and the output of the same call
//   stateful_stream REFDIR flip       flip_state.onnx (s_out = s^T * 0.5 + x),
//                                     its state updated in place: wrong unless
//                                     the library reads s from a copy
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "aot_flip_state.h"
#include "aot_stream_lstm.h"
#include "halide_view.h"
#include "npy_lite.h"

namespace {

int g_failures = 0;

void failure(const std::string &what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  ++g_failures;
}

std::vector<float> floats(const npy_lite::Array &a) {
  std::vector<float> v(static_cast<size_t>(a.elements()));
  std::memcpy(v.data(), a.bytes.data(), v.size() * sizeof(float));
  return v;
}

// rtol 1e-4, atol 1e-5, as disco run --expect.
void compare(const std::string &what, const std::vector<float> &got, const npy_lite::Array &ref) {
  const std::vector<float> want = floats(ref);
  if (got.size() != want.size()) return failure(what + ": " + std::to_string(got.size()) + " values, reference " +
                                                std::to_string(want.size()));
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-5 + 1e-4 * std::fabs(want[i])))
      return failure(what + "[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", PyTorch " +
                     std::to_string(want[i]));
}

// Three steps of flip_state with s passed as both input and output.
void run_flip(const std::string &dir) {
  npy_lite::Array s0 = npy_lite::read(dir + "/flip_s0.npy");
  std::vector<float> s = floats(s0);
  for (int k = 1; k <= 3; ++k) {
    const std::string step = std::to_string(k);
    npy_lite::Array x = npy_lite::read(dir + "/flip_x." + step + ".npy");
    View sv(s.data(), s0.shape, halide_type_float, 32), xv(x.bytes.data(), x.shape, halide_type_float, 32);
    View out(s.data(), s0.shape, halide_type_float, 32);
    if (aot_flip_state_run(&sv.buf, &xv.buf, &out.buf) != 0) return failure("step " + step + ": " + aot_flip_state_last_error());
    compare("step " + step + " s_out", s, npy_lite::read(dir + "/flip_s_out." + step + ".npy"));
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3 || (std::strcmp(argv[2], "pingpong") != 0 && std::strcmp(argv[2], "inplace") != 0 &&
                    std::strcmp(argv[2], "flip") != 0)) {
    std::fprintf(stderr, "usage: stateful_stream REFDIR pingpong|inplace|flip\n");
    return 2;
  }
  const std::string dir = argv[1];
  if (std::strcmp(argv[2], "flip") == 0) {
    try {
      run_flip(dir);
    } catch (const std::exception &e) {
      failure(e.what());
    }
    if (g_failures == 0) std::printf("stateful_stream flip: 3 in-place steps match PyTorch\n");
    return g_failures == 0 ? 0 : 1;
  }
  const bool inplace = std::strcmp(argv[2], "inplace") == 0;
  try {
    npy_lite::Array h0 = npy_lite::read(dir + "/h0.npy"), c0 = npy_lite::read(dir + "/c0.npy");
    npy_lite::Array temperature = npy_lite::read(dir + "/temperature.npy");
    if (!temperature.shape.empty()) failure("temperature.npy is not a scalar");
    const std::vector<int64_t> state_shape = h0.shape;
    // state[0] holds the current state; without inplace, state[1] receives the next.
    std::vector<float> h[2] = {floats(h0), floats(h0)}, c[2] = {floats(c0), floats(c0)};
    View t(temperature.bytes.data(), {}, halide_type_float, 32);
    for (int k = 1; k <= 3; ++k) {
      const std::string chunk = std::to_string(k);
      npy_lite::Array ids = npy_lite::read(dir + "/ids." + chunk + ".npy");
      npy_lite::Array ref_probs = npy_lite::read(dir + "/probs." + chunk + ".npy");
      View x(ids.bytes.data(), ids.shape, halide_type_int, 64);
      View h_in(h[0].data(), state_shape, halide_type_float, 32), c_in(c[0].data(), state_shape, halide_type_float, 32);
      const int next = inplace ? 0 : 1;
      View h_out(h[next].data(), state_shape, halide_type_float, 32);
      View c_out(c[next].data(), state_shape, halide_type_float, 32);
      std::vector<float> probs(static_cast<size_t>(ref_probs.elements()), NAN);
      View p(probs.data(), ref_probs.shape, halide_type_float, 32);
      if (aot_stream_lstm_run(&x.buf, &h_in.buf, &c_in.buf, &t.buf, &p.buf, &h_out.buf, &c_out.buf) != 0) {
        failure("chunk " + chunk + ": " + aot_stream_lstm_last_error());
        break;
      }
      compare("chunk " + chunk + " probs", probs, ref_probs);
      compare("chunk " + chunk + " h_out", h[next], npy_lite::read(dir + "/h_out." + chunk + ".npy"));
      compare("chunk " + chunk + " c_out", c[next], npy_lite::read(dir + "/c_out." + chunk + ".npy"));
      if (!inplace) {
        std::swap(h[0], h[1]);
        std::swap(c[0], c[1]);
      }
    }
  } catch (const std::exception &e) {
    failure(e.what());
  }
  if (g_failures == 0) std::printf("stateful_stream %s: 3 chunks match PyTorch\n", argv[2]);
  return g_failures == 0 ? 0 : 1;
}
