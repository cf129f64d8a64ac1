"""What the probe generators share (make_recurrent_probe.py,
make_transformer_probe.py): each model exported by torch.onnx (opset 17) with
its dynamic axes, its inputs and PyTorch's outputs saved as NAME.<k>.input.npy
and NAME.<k>.output.npy, and a harness sweep file (sweep.txt), all in the
current folder."""
import numpy as np
import torch


def export_probe(models, header, prepare=None):
    """models: name -> (module, input shapes, input dynamic axes, output dynamic axes).
    prepare(module), where given, runs before the module's inputs are drawn."""
    lines = []
    for name, (m, shapes, axes, out_axes) in models.items():
        m.eval()
        if prepare is not None:
            prepare(m)
        xs = [torch.randn(*s) for s in shapes]
        torch.onnx.export(m, xs[0], f"{name}.onnx", input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": axes, "y": out_axes}, opset_version=17)
        for k, x in enumerate(xs, 1):
            with torch.no_grad():
                y = m(x)
            np.save(f"{name}.{k}.input.npy", x.numpy())
            np.save(f"{name}.{k}.output.npy", y.numpy())
            lines.append(f"{name} {name}.onnx --input x={name}.{k}.input.npy --expect y={name}.{k}.output.npy")
    with open("sweep.txt", "w") as f:
        f.write(f"# {header}\n" + "\n".join(lines) + "\n")
