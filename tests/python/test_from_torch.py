# disco.from_torch: a torch module exported through torch.onnx in memory,
# compiled, and checked against the module itself.
import numpy as np
import pytest

import disco

torch = pytest.importorskip("torch")

BATCH_AXES = {"input0": {0: "batch"}, "output0": {0: "batch"}}


def reference(module, *inputs):
    with torch.no_grad():
        out = module(*inputs)
    return [o.numpy() for o in out] if isinstance(out, tuple) else out.numpy()


def test_a_dynamic_batch_runs_at_two_batch_sizes_matching_torch(mlp):
    model = disco.from_torch(mlp, torch.randn(2, 8), dynamic_axes=BATCH_AXES)
    assert model.inputs == [disco.TensorInfo("input0", "float32", ("batch", 8))]
    assert model.outputs == [disco.TensorInfo("output0", "float32", ("batch", 4))]
    for batch in (3, 17):
        x = torch.randn(batch, 8)
        out = model.run(x.numpy())
        assert out["output0"].shape == (batch, 4)
        np.testing.assert_allclose(out["output0"], reference(mlp, x), rtol=1e-4, atol=1e-5)
    assert model.compiles <= 1  # one compile (none on a cache hit) for both batch sizes


def test_a_torch_tensor_can_be_given_directly(mlp):
    model = disco.from_torch(mlp, torch.randn(2, 8), dynamic_axes=BATCH_AXES, targets="host")
    x = torch.randn(4, 8)
    np.testing.assert_allclose(model.run(input0=x)["output0"], reference(mlp, x), rtol=1e-4, atol=1e-5)
    assert model.last_run_copied == []  # a CPU tensor shares its memory with numpy


def test_without_dynamic_axes_the_example_shape_is_fixed(mlp):
    model = disco.from_torch(mlp, (torch.randn(2, 8),))
    assert model.inputs[0].shape == (2, 8)
    with pytest.raises(disco.Error, match=r"input 'input0' dim 0 is 3, expected 2"):
        model.run(np.zeros((3, 8), np.float32))


class TwoInTwoOut(torch.nn.Module):
    def forward(self, a, b):
        return a * b + 1.0, torch.softmax(a - b, dim=-1)


def test_names_and_several_inputs_and_outputs():
    module = TwoInTwoOut()
    axes = {n: {0: "rows", 1: "cols"} for n in ("a", "b", "prod", "soft")}
    model = disco.from_torch(module, (torch.randn(2, 3), torch.randn(2, 3)), dynamic_axes=axes,
                             input_names=["a", "b"], output_names=["prod", "soft"], name="two_by_two")
    assert [i.name for i in model.inputs] == ["a", "b"]
    assert [o.name for o in model.outputs] == ["prod", "soft"]
    assert model.inputs[0].shape == ("rows", "cols")
    a, b = torch.randn(5, 7), torch.randn(5, 7)
    out = model.run(b=b.numpy(), a=a.numpy())
    prod, soft = reference(module, a, b)
    np.testing.assert_allclose(out["prod"], prod, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["soft"], soft, rtol=1e-5, atol=1e-6)


def test_hints_and_static_shapes_are_passed_to_the_compile(mlp):
    hinted = disco.from_torch(mlp, torch.randn(2, 8), dynamic_axes=BATCH_AXES, hints={"batch": 4}, threads=1)
    x = torch.randn(4, 8)
    np.testing.assert_allclose(hinted.run(x.numpy())["output0"], reference(mlp, x), rtol=1e-4, atol=1e-5)
    x = torch.randn(7, 8)  # not the hinted value: the generic branch
    np.testing.assert_allclose(hinted.run(x.numpy())["output0"], reference(mlp, x), rtol=1e-4, atol=1e-5)

    static = disco.from_torch(mlp, torch.randn(2, 8), dynamic_axes=BATCH_AXES, static={"input0": (6, 8)})
    x = torch.randn(6, 8)
    np.testing.assert_allclose(static.run(x.numpy())["output0"], reference(mlp, x), rtol=1e-4, atol=1e-5)
    with pytest.raises(disco.Error):
        static.run(np.zeros((5, 8), np.float32))  # compiled for batch 6 only


def test_progress_lines_reach_the_callable_and_its_exception_is_raised(mlp):
    lines = []
    disco.from_torch(mlp, torch.randn(2, 8), targets="host", cache=False, progress=lines.append)
    assert any("inferring shapes" in line for line in lines)

    calls = []

    def interrupt(line):
        calls.append(line)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # raised once the compile is over, as it was
        disco.from_torch(mlp, torch.randn(2, 8), targets="host", cache=False, progress=interrupt)
    assert len(calls) == 1  # not called again after it raised


class NanKeeping(torch.nn.Module):
    def forward(self, x, y):
        F = torch.nn.functional
        return (torch.relu(x), torch.clamp(x, -1.0, 1.0), torch.maximum(x, y), torch.minimum(x, y),
                x.amax(dim=-1), x.amax(dim=1), x.amin(dim=0), F.hardsigmoid(x), F.celu(x), torch.softmax(x, -1))


def test_nans_and_infinities_reach_the_outputs_as_in_torch():
    # Halide compiles floats under no-NaNs flags; with its own max, Relu(NaN)
    # was 0 and amax skipped NaNs (math_library.h, max and min).
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(3, 37, 67, generator=g) * 3, torch.randn(3, 37, 67, generator=g) * 3
    for t in (x, y):
        m = torch.rand(t.shape, generator=g)
        t[m < 0.02] = float("nan")
        t[(m > 0.5) & (m < 0.51)] = float("inf")
        t[(m > 0.6) & (m < 0.61)] = -float("inf")
    x[1, :5] = torch.randn(5, 67, generator=g)  # rows without NaNs
    names = ["relu", "clamp", "maximum", "minimum", "amax_last", "amax_mid", "amin_first", "hardsigmoid", "celu",
             "softmax"]
    axes = {"x": {0: "n"}, "y": {0: "n"}}
    model = disco.from_torch(NanKeeping(), (x, y), dynamic_axes=axes, input_names=["x", "y"], output_names=names)
    out = model.run(x=x.numpy(), y=y.numpy())
    for name, want in zip(names, reference(NanKeeping(), x, y)):
        assert np.isnan(want).any(), name
        np.testing.assert_allclose(out[name], want, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=name)
