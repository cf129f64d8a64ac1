# disco.compile and Model.run on the bundled convnet ([batch, 3, H, W] -> [batch, 10]),
# checked against PyTorch's outputs in tests/references.
import sys
import threading

import numpy as np
import pytest

import disco
from conftest import CONVNET, convnet_reference


def test_convnet_matches_the_pytorch_references_at_three_shapes(convnet):
    for k in (1, 2, 3):
        x, ref = convnet_reference(k)
        out = convnet.run(x)
        assert list(out) == ["y"]
        assert out["y"].dtype == np.float32 and out["y"].shape == ref.shape
        np.testing.assert_allclose(out["y"], ref, rtol=1e-4, atol=1e-5)
    assert convnet.compiles <= 1  # one compile (none on a cache hit) served every shape


def test_inputs_and_outputs_show_names_dtypes_and_symbolic_dims(convnet):
    assert convnet.inputs == [disco.TensorInfo("x", "float32", ("batch", 3, "H", "W"))]
    assert convnet.outputs == [disco.TensorInfo("y", "float32", ("batch", 10))]
    assert convnet.name == "convnet"


def test_positional_keyword_and_call_give_the_same_answer(convnet):
    x, ref = convnet_reference(2)
    by_position = convnet.run(x)["y"]
    by_name = convnet.run(x=x)["y"]
    by_call = convnet(x)["y"]
    np.testing.assert_allclose(by_position, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(by_position, by_name)
    np.testing.assert_array_equal(by_position, by_call)


def test_a_contiguous_input_is_read_in_place_and_others_are_copied(convnet):
    x, ref = convnet_reference(1)
    refs_before = sys.getrefcount(x)
    np.testing.assert_allclose(convnet.run(x)["y"], ref, rtol=1e-4, atol=1e-5)
    assert convnet.last_run_copied == []
    assert sys.getrefcount(x) == refs_before  # the lent buffer's reference was given back

    fortran = np.asfortranarray(x)
    assert not fortran.flags.c_contiguous
    np.testing.assert_allclose(convnet.run(fortran)["y"], ref, rtol=1e-4, atol=1e-5)
    assert convnet.last_run_copied == ["x"]

    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), np.float32)
    wide[..., ::2] = x  # a strided view over every other element
    np.testing.assert_allclose(convnet.run(wide[..., ::2])["y"], ref, rtol=1e-4, atol=1e-5)
    assert convnet.last_run_copied == ["x"]

    swapped = x.astype(x.dtype.newbyteorder(">"))  # the same values, big-endian
    np.testing.assert_allclose(convnet.run(swapped)["y"], ref, rtol=1e-4, atol=1e-5)
    assert convnet.last_run_copied == ["x"]


def test_outputs_are_fresh_arrays_for_each_run(convnet):
    x1, ref1 = convnet_reference(1)
    first = convnet.run(x1)["y"]
    convnet.run(x1 * 2)
    np.testing.assert_allclose(first, ref1, rtol=1e-4, atol=1e-5)  # not overwritten by the second run


def test_runs_from_several_threads_each_get_their_answer(convnet):
    cases = [convnet_reference(k) for k in (1, 2, 3)]
    errors = []

    def work(x, ref):
        try:
            for _ in range(3):
                np.testing.assert_allclose(convnet.run(x)["y"], ref, rtol=1e-4, atol=1e-5)
        except Exception as e:  # noqa: BLE001 - reported below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=case) for case in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_bad_shape_raises_disco_error_naming_the_dim(convnet):
    x, _ = convnet_reference(1)
    with pytest.raises(disco.Error, match=r"input 'x' dim 1 is 2, expected 3") as e:
        convnet.run(x[:, :2].copy())
    assert isinstance(e.value, ValueError)


def test_a_wrong_dtype_raises_disco_error(convnet):
    x, _ = convnet_reference(1)
    with pytest.raises(disco.Error, match=r"input 'x' has dtype float64, expected float32"):
        convnet.run(x.astype(np.float64))
    with pytest.raises(disco.Error, match=r"complex64, which disco has no dtype for"):
        convnet.run(x.astype(np.complex64))


def test_missing_unknown_and_doubly_given_inputs_raise_disco_error(convnet):
    x, _ = convnet_reference(1)
    with pytest.raises(disco.Error, match=r"input 'x' \[batch, 3, H, W\] is not given"):
        convnet.run()
    with pytest.raises(disco.Error, match=r"model has no input named 'z'"):
        convnet.run(z=x)
    with pytest.raises(disco.Error, match=r"input 'x' is given both by position and by name"):
        convnet.run(x, x=x)
    with pytest.raises(disco.Error, match=r"takes 1 inputs, got 2 positional"):
        convnet.run(x, x)


def test_a_missing_file_raises_disco_error(tmp_path):
    with pytest.raises(disco.Error, match=r"cannot open '.*missing\.onnx'"):
        disco.compile(tmp_path / "missing.onnx")


def test_bytes_that_are_not_onnx_raise_disco_error():
    with pytest.raises(disco.Error):
        disco.compile(b"this is not an ONNX model")


def test_a_model_given_as_bytes_runs_like_its_file():
    model = disco.compile(CONVNET.read_bytes(), name="convnet_bytes", targets=["host"])
    x, ref = convnet_reference(3)
    np.testing.assert_allclose(model.run(x)["y"], ref, rtol=1e-4, atol=1e-5)
    assert model.name == "convnet_bytes"


def test_malformed_options_raise_disco_error():
    with pytest.raises(disco.Error, match=r"empty backend name"):
        disco.compile(CONVNET, targets="host,,onednn")
    with pytest.raises(disco.Error, match=r"bad shape '2xx3'"):
        disco.compile(CONVNET, static={"x": "2xx3"})
