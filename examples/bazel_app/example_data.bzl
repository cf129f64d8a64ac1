"""The model this example compiles, and its PyTorch reference inputs and outputs.

bert_layer ([batch, seq, 768], from ../shared/models next to the disco checkout)
when it is there, else the bundled layernorm_softmax (examples/models); both
have references at several shapes in tests/references. Exposes :model (the
.onnx file), model_name.txt and in1/out1/in2/out2.npy.
"""

def _example_data_impl(rctx):
    disco_root = rctx.path(Label("@//:WORKSPACE")).dirname.dirname.dirname
    shared = disco_root.dirname.get_child("shared").get_child("models").get_child("bert_layer.onnx")
    if shared.exists:
        name, model = "bert_layer", shared
    else:
        name, model = "layernorm_softmax", disco_root.get_child("examples").get_child("models").get_child("layernorm_softmax.onnx")
    refs = disco_root.get_child("tests").get_child("references")
    rctx.symlink(model, name + ".onnx")
    for k in ["1", "2"]:
        rctx.symlink(refs.get_child("%s.%s.input.npy" % (name, k)), "in%s.npy" % k)
        rctx.symlink(refs.get_child("%s.%s.output.npy" % (name, k)), "out%s.npy" % k)
    rctx.file("model_name.txt", name + "\n")
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD", """
exports_files(glob(["*"]), visibility = ["//visibility:public"])

alias(name = "model", actual = ":%s.onnx", visibility = ["//visibility:public"])
""" % name)

example_data = repository_rule(implementation = _example_data_impl, local = True)
