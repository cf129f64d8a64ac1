"""Bazel rules for disco's ahead-of-time compiled models.

In WORKSPACE:

    local_repository(name = "disco", path = "/path/to/disco/bazel")
    load("@disco//:disco.bzl", "disco_repository")
    disco_repository(name = "disco_sdk")

In a BUILD file:

    load("@disco//:disco.bzl", "disco_model")
    disco_model(name = "bert", model = "bert_layer.onnx", backends = ["host"])
    cc_binary(name = "app", srcs = ["main.cc"], deps = [":bert"])

`disco_model` runs `disco compile` at build time; the cc_library it makes
carries NAME.h (NAME_run, NAME_output_shapes, NAME_last_error) and NAME.a, and
needs no libHalide at run time. Written for Bazel 2.1 and later.
"""

def _disco_repository_impl(rctx):
    disco = rctx.os.environ.get("DISCO_BIN", "") or rctx.attr.disco
    if not disco:
        found = rctx.which("disco")
        if found == None:
            fail("disco_repository: no disco compiler: set DISCO_BIN to build/tools/disco " +
                 "of a disco build, give disco = \"...\", or put disco on PATH")
        disco = str(found)
    if not rctx.path(disco).exists:
        fail("disco_repository: %s does not exist (from DISCO_BIN or disco = ...)" % disco)
    rctx.symlink(disco, "disco")

    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD", """
exports_files(["disco"], visibility = ["//visibility:public"])
""")

disco_repository = repository_rule(
    implementation = _disco_repository_impl,
    attrs = {
        "disco": attr.string(doc = "Absolute path of the disco binary; $DISCO_BIN wins, then PATH."),
    },
    environ = ["DISCO_BIN"],
    local = True,
)

# What the backends' runtime glue inside NAME.a links (Backend::aot_glue; NAME.pc lists the same).
def _glue_linkopts(backends, target):
    opts = []
    if "onednn" in backends:
        opts += ["-ldnnl", "-lgomp"]
    if "cublas" in backends:
        opts.append("-lgomp")  # the glue dlopens CUDA and cuBLAS
    if "vitis_ai" in backends:
        opts += ["-lvart-runner", "-lxir", "-lunilog", "-lglog"]  # a disco built with VART (tools/setup.sh installs it)
    if opts or "example" in backends:
        opts.append("-lstdc++")
    # The host's kernels run their parallel loops on OpenMP on CPU targets.
    if "-lgomp" not in opts and not (target and ("cuda" in target or "opencl" in target)):
        opts.append("-lgomp")
    return opts

def disco_model(name, model, target = None, backends = None, sdk = "@disco_sdk", visibility = None, **kwargs):
    """Compiles an ONNX model ahead of time into the cc_library NAME (NAME.h, NAME.a).

    Args:
      name: the library, the header NAME.h and the prefix of its C functions (NAME_run, ...).
      model: the .onnx file (a label).
      target: a Halide target string such as "x86-64-linux-avx2"; disco's default (the host) when None.
      backends: backends in order of preference, e.g. ["onednn", "host"]; host alone when None.
      sdk: the disco_repository that provides the compiler.
      visibility, **kwargs: passed to the cc_library.
    """
    flags = []
    if target:
        flags.append("--target " + target)
    if backends:
        flags.append("--targets " + ",".join(backends))
    native.genrule(
        name = name + "_compile",
        srcs = [model],
        outs = [name + ".a", name + ".h", name + ".pc"],
        tools = [sdk + "//:disco"],
        # A private compile cache: Bazel caches the outputs itself.
        cmd = ("cache=$$(mktemp -d) && DISCO_CACHE_DIR=$$cache $(location {sdk}//:disco) compile " +
               "$(location {model}) -o $(@D)/{name} {flags}; rc=$$?; rm -rf $$cache; exit $$rc")
            .format(sdk = sdk, model = model, name = name, flags = " ".join(flags)),
        message = "disco compile %s" % name,
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name,
        hdrs = [name + ".h"],
        srcs = [name + ".a"],
        linkopts = _glue_linkopts(backends or [], target) + ["-lpthread", "-ldl", "-lm"],  # what NAME.h and NAME.pc say
        visibility = visibility,
        **kwargs
    )
