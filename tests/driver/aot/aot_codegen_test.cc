// The AOT generator's pieces (driver/aot/): what it rejects, and the C text it
// writes for names, dims and the header's entry points.
#include <gtest/gtest.h>

#include "frontend/errors.h"
#include "driver/aot/c_text.h"
#include "driver/aot/driver_gen.h"
#include "driver/aot/header_gen.h"
#include "driver/aot/link_flags.h"
#include "tests/support/error_message.h"

namespace disco::aot {
namespace {

// y = f(x), x: [batch, 4] float32, one kernel step.
Plan small_plan() {
  Plan p;
  p.name = "m";
  const Shape s = {Dim::symbol("batch"), Dim(4)};
  p.inputs.push_back({"x", DType::F32, s});
  p.output_names = {"y"};
  p.buffers.push_back({PlanBuffer::Input, "x", DType::F32, s, 0});
  p.buffers.push_back({PlanBuffer::Output, "y", DType::F32, s, 0});
  p.input_buffers = {0};
  p.output_buffers = {1};
  PlanStep st;
  st.kernel = "m_k0";
  st.label = "loop: Relu";
  st.inputs = {0};
  st.outputs = {1};
  p.steps.push_back(st);
  return p;
}

using testing::error_message;

TEST(AotCodegen, RejectsHostOpsNamingTheStep) {
  Plan p = small_plan();
  p.steps[0].host_op = "NonZero";
  p.steps[0].label = "nz_node";
  std::string e = error_message([&] { driver_source(p, "m", "m.h"); });
  EXPECT_NE(e.find("nz_node"), std::string::npos) << e;
  EXPECT_NE(e.find("host op NonZero"), std::string::npos) << e;
}

// A library backend's step (issue #22): made once through runtime/extern_c_abi.h
// after the backends' install functions, called with the buffers' pointers,
// extents and every symbol; the thread count reaches it. Also in GPU libraries.
TEST(AotCodegen, ExternStepsCallTheGlue) {
  Plan p = small_plan();
  p.steps[0].kernel.clear();
  p.steps[0].extern_call = "onednn.matmul";
  p.steps[0].label = "MatMul_3";
  p.steps[0].params = {{"trans_b", "1"}, {"post_ops", "relu"}};
  const std::string d =
      driver_source(p, "m", "m.h", "", {"disco_install_onednn_glue"}, "disco_openmp_set_par_for_threads");
  for (const char *want :
       {"extern void disco_install_onednn_glue(void);", "  disco_install_onednn_glue();\n",
        "static const char *const k_symbol_names[1] = {\"batch\"};",
        "static const char *const k_extern0_keys[2] = {\"post_ops\", \"trans_b\"};",
        "static const char *const k_extern0_values[2] = {\"relu\", \"1\"};",
        "g_extern[0] = disco_extern_create(\"onednn.matmul\", \"MatMul_3\", 2, k_extern0_keys, k_extern0_values",
        "pthread_once(&g_extern_once, disco_extern_init);", "{hb[0].host, 1, 2, sh + 0, 0}",
        "{hb[1].host, 1, 2, sh + 2, 0}", "disco_extern_run(g_extern[0], 1, ti, 1, to, 1, k_symbol_names, s,",
        "__atomic_store_n(&g_extern_threads, n, __ATOMIC_RELAXED);",
        // the kernels' parallel loops run on the glue's OpenMP threads, whose count follows too
        "extern void disco_openmp_set_par_for_threads(int);", "  if (n >= 0) disco_openmp_set_par_for_threads(n);\n"})
    EXPECT_NE(d.find(want), std::string::npos) << want;
  EXPECT_EQ(d.find("_argv"), std::string::npos) << "no Halide kernel to declare";
  // In a GPU library (cuBLAS steps beside CUDA kernels): an input a kernel left
  // on the device comes back first, the result is marked written on the host,
  // and failures leave through the device clean-up.
  const std::string g = driver_source(p, "m", "m.h", "cuda", {"disco_install_cublas_glue"});
  const size_t copy = g.find("if ((hb[0].flags & 2) && halide_copy_to_host(NULL, &hb[0]) != 0)"),
               run = g.find("disco_extern_run(g_extern[0]"), dirty = g.find("hb[1].flags = 1;");
  ASSERT_NE(copy, std::string::npos) << g;
  ASSERT_NE(run, std::string::npos) << g;
  ASSERT_NE(dirty, std::string::npos) << g;
  EXPECT_LT(copy, run);
  EXPECT_LT(run, dirty);
  EXPECT_NE(g.find("{ disco_rc = disco_fail(\"step %s (%s) failed: %s\""), std::string::npos) << g;
  EXPECT_EQ(g.find("return disco_fail(\"step %s"), std::string::npos) << "a GPU driver frees device memory on failure";
}

// A temporary whose channels a oneDNN layout pads (PlanBuffer::channel_multiple)
// gets its arena bytes with the channels rounded up: 24 of 16 take 32.
TEST(AotCodegen, PaddedChannelTemporariesGetTheirRoundedUpBytes) {
  Plan p = small_plan();
  const Shape t = {Dim::symbol("batch"), Dim(24), Dim(3), Dim(3)};
  p.buffers.push_back({PlanBuffer::Temp, "t", DType::F32, t, -1});
  p.buffers.back().channel_multiple = 16;
  p.steps[0].kernel.clear();
  p.steps[0].extern_call = "onednn.conv";
  p.steps[0].outputs = {2};
  PlanStep second = p.steps[0];
  second.inputs = {2};
  second.outputs = {1};
  p.steps.push_back(second);
  const std::string d = driver_source(p, "m", "m.h", "", {"disco_install_onednn_glue"});
  EXPECT_NE(d.find(" / 24 * 32) * 4;"), std::string::npos) << d;
  p.buffers.back().shape[1] = Dim::symbol("batch") * 24;  // a padded temporary has a constant channel count
  const std::string e = error_message([&] { driver_source(p, "m", "m.h", "", {"disco_install_onednn_glue"}); });
  EXPECT_NE(e.find("not a constant channel count"), std::string::npos) << e;
}

TEST(AotCodegen, SizesMustFollowFromInputShapes) {
  Plan p = small_plan();
  p.buffers[1].shape = {Dim::symbol("n_nonzero"), Dim(4)};  // a symbol no input binds
  const std::string e = error_message([&] { driver_source(p, "m", "m.h"); });
  EXPECT_NE(e.find("symbol 'n_nonzero' is not bound by any input shape"), std::string::npos) << e;
}

TEST(AotCodegen, CText) {
  EXPECT_EQ(c_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(c_string("x\ny"), "\"x\\012y\"");
  EXPECT_EQ(c_string("%s?"), "\"%s\\077\"");
  EXPECT_EQ(c_identifier("/fc/Gemm:0"), "_fc_Gemm_0");
  EXPECT_EQ(c_identifier("3d"), "_3d");
  EXPECT_TRUE(is_c_identifier("bert_layer"));
  EXPECT_FALSE(is_c_identifier("2x"));
  EXPECT_FALSE(is_c_identifier("a-b"));
  const std::map<std::string, int> slots = {{"batch", 0}, {"seq", 1}};
  EXPECT_EQ(c_dim_expr(Dim(768), slots), "(INT64_C(768))");
  const std::string e = c_dim_expr(floor_div(Dim::symbol("seq"), Dim(2)) + Dim::symbol("batch") * 3, slots);
  EXPECT_NE(e.find("disco_fdiv((INT64_C(1) * s[1]), (INT64_C(2)))"), std::string::npos) << e;
  EXPECT_NE(e.find("INT64_C(3) * s[0]"), std::string::npos) << e;
}

TEST(AotCodegen, HeaderDeclaresEntryPointsInGraphOrderAndMetadata) {
  const std::string h = header_source(small_plan(), {"m", "m.onnx", "x86-64-linux-avx2"});
  for (const char *want : {"int m_run(const halide_buffer_t *in_x,\n    halide_buffer_t *out_y);",
                           "int m_output_shapes(const halide_buffer_t *in_x,", "const char *m_last_error(void);",
                           "#define M_NUM_INPUTS 1", "extern const char *const m_input_dims[];",
                           "input  0: x float32 [batch, 4]", "-lpthread -ldl -lm", "target x86-64-linux-avx2",
                           // either include order with HalideRuntime.h (the aot_include_order test compiles both)
                           "#if __has_include(\"HalideRuntime.h\")\n#include \"HalideRuntime.h\"",
                           "#if !defined(HALIDE_HALIDERUNTIME_H) && !defined(DISCO_AOT_HALIDE_TYPES)"})
    EXPECT_NE(h.find(want), std::string::npos) << want;
  const std::string d = driver_source(small_plan(), "m", "m.h");
  for (const char *want : {"const char *const m_input_dims[1] = {\"[batch, 4]\"};", "rc = m_k0_argv(args);",
                           "expected 4 (fixed by the model)", "extern int m_k0_argv(void **);",
                           "#define DISCO_AOT_OWN_HALIDE_TYPES 1",
                           // re-entrant: each run its own arena, no lock around the run
                           "struct disco_arena *a = disco_take_arena(DISCO_TEMPS);", "disco_give_back(a);",
                           "void m_release_memory(void) { disco_release_arenas(); }",
                           "pthread_rwlock_rdlock(disco_aot_pool_lock());",
                           "int m_set_num_threads(int n) {\n  const int old = disco_set_num_threads(n);\n"})
    EXPECT_NE(d.find(want), std::string::npos) << want;
  EXPECT_EQ(d.find("g_extern"), std::string::npos) << "no extern steps, no glue";
}

// NAME.pc: relative to its own folder, the link flags NAME.h names, and no
// '#' or '$' from the model's file name (a comment, a variable in .pc text).
TEST(AotCodegen, PkgConfigFile) {
  const std::string pc = pkg_config_source("m", "my#model$.onnx", "host");
  for (const char *want : {"prefix=${pcfiledir}\n", "Name: m\n", "Cflags: -I${includedir}\n",
                           "Libs: ${libdir}/m.a -lpthread -ldl -lm\n", "Description: the disco AOT library of my_model_.onnx\n"})
    EXPECT_NE(pc.find(want), std::string::npos) << want << "\n" << pc;
  EXPECT_NE(pc.find("\nVersion: "), std::string::npos) << pc;
  const std::string h = header_source(small_plan(), {"m", "m.onnx", "host"});
  EXPECT_NE(h.find(std::string("Link m.a with ") + kLinkFlags), std::string::npos) << h;
  EXPECT_NE(h.find("pkg-config --cflags --libs m"), std::string::npos) << h;
  // A library with oneDNN regions: the glue's flags first, in NAME.pc and NAME.h alike.
  const std::string flags = link_flags({"-ldnnl", "-lgomp", "-lstdc++"});
  EXPECT_EQ(flags, "-ldnnl -lgomp -lstdc++ -lpthread -ldl -lm");
  EXPECT_NE(pkg_config_source("m", "m.onnx", "host", flags).find("Libs: ${libdir}/m.a " + flags + "\n"),
            std::string::npos);
  const std::string h2 = header_source(small_plan(), {"m", "m.onnx", "host", flags});
  EXPECT_NE(h2.find("Link m.a with " + flags), std::string::npos) << h2;
}

}  // namespace
}  // namespace disco::aot
