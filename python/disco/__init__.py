"""disco: compile dynamic-shape ONNX models once and run them at any shape.

    import disco, numpy as np
    model = disco.compile("examples/models/convnet.onnx")
    print(model.inputs)        # [TensorInfo(name='input', dtype='float32', shape=('batch', 3, 'H', 'W'))]
    out = model.run(input=np.zeros((2, 3, 32, 32), np.float32))   # {'output': array(...)}
    model.export("out", "convnet")                               # out/convnet.a, out/convnet.h

Errors are raised as disco.Error (a ValueError) with the messages `disco run` prints.
"""
import collections

TensorInfo = collections.namedtuple("TensorInfo", ["name", "dtype", "shape"])
TensorInfo.__doc__ = """A model input or output: its name, numpy dtype name ('float32', ...; 'bfloat16' tensors are
uint16 arrays of the bit patterns) and shape, a tuple of ints (constant dims) and strings (symbolic dims,
e.g. 'batch' or '2*seq')."""

from ._disco import Error, Model  # noqa: E402  (TensorInfo must exist first: the native module makes them)
from ._disco import compile as _compile  # noqa: E402

__all__ = ["Error", "Model", "TensorInfo", "compile", "from_torch"]


def compile(model, *, name=None, target="host", targets=None, hints=None, static=None, threads=0, cache=True,
            compile_jobs=0, max_memory=0, progress=None):
    """Compiles an ONNX model with its symbolic dims and returns a disco.Model.

    model: a path (str or os.PathLike) or the bytes of an ONNX file.
    name: for bytes, the name standing for the file stem (default 'model').
    The other options are `disco run`'s:
      target        --target: 'host' (default), 'opencl', 'cuda' or a Halide target string
      targets       --targets: backends in priority order, 'onednn,host' or ['host'] (default onednn, host)
      hints         --hint: {'seq': 128}, likely values of symbolic dims (kernels get a specialized branch)
      static        --static: {'x': (2, 128, 768)} or {'x': '2x128x768'}, compile these inputs for one shape
      threads       --threads: worker threads of each run (default 0: all cores)
      cache         False for --no-cache
      compile_jobs  --compile-jobs: kernels compiled at once (default 0: one per core)
      max_memory    --max-memory: the most bytes one value may take (default 0: $DISCO_MAX_MEMORY, else RAM)
      progress      a callable taking each line of --verbose's compile progress, e.g. print
    """
    return _compile(model, name=name, target=target, targets=targets, hints=hints or {}, static=static,
                    threads=threads, cache=cache, compile_jobs=compile_jobs, max_memory=max_memory,
                    progress=progress)


def _count_outputs(module, example_inputs):
    import torch
    with torch.no_grad():
        out = module(*example_inputs)
    return len(out) if isinstance(out, (tuple, list)) else 1


def from_torch(module, example_inputs, dynamic_axes=None, input_names=None, output_names=None, opset=17,
               **compile_kwargs):
    """Exports a torch.nn.Module through torch.onnx (in memory) and compiles it.

    example_inputs: a tensor or a tuple of tensors, as torch.onnx.export takes.
    dynamic_axes: torch.onnx's, e.g. {'input0': {0: 'batch'}, 'output0': {0: 'batch'}}; the axes not named
      there are fixed to the example's sizes.
    input_names, output_names: default input0, input1, ... and output0, output1, ...
    The other keyword arguments go to disco.compile (name defaults to the module's class name).
    """
    import io

    import torch

    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    if input_names is None:
        input_names = ["input%d" % i for i in range(len(example_inputs))]
    if output_names is None:
        output_names = ["output%d" % i for i in range(_count_outputs(module, example_inputs))]
    buffer = io.BytesIO()
    torch.onnx.export(module, example_inputs, buffer, input_names=list(input_names),
                      output_names=list(output_names), dynamic_axes=dynamic_axes, opset_version=opset)
    compile_kwargs.setdefault("name", type(module).__name__)
    return compile(buffer.getvalue(), **compile_kwargs)
