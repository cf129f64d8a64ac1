# Stateful models through Model.run: the caller carries a state from each
# run's outputs into the next run's inputs, passing disco's output arrays back
# as they are (read in place, no copy). References: PyTorch's, from
# tests/references/make_stateful_references.py (tests/references/stateful/).
import numpy as np
import pytest

import disco
from conftest import REFERENCES

STATEFUL = REFERENCES / "stateful"
CHUNKS = (1, 2, 3)


def ref(name):
    return np.load(STATEFUL / name)


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def lstm():
    """ids int64 [batch, seq], h, c [1, batch, 16], temperature float32 [] -> probs, h_out, c_out."""
    return disco.compile(STATEFUL / "stream_lstm.onnx")


@pytest.fixture(scope="module")
def flip():
    """s_out = s^T * 0.5 + x, s and x [n, n]."""
    return disco.compile(STATEFUL / "flip_state.onnx")


def run_stream(model, temperature, carry=True):
    """The three chunks from h0, c0, each run's h_out, c_out fed back (or not); each chunk's outputs."""
    h, c = ref("h0.npy"), ref("c0.npy")
    outs = []
    for k in CHUNKS:
        out = model.run(ids=ref(f"ids.{k}.npy"), h=h, c=c, temperature=temperature)
        outs.append(out)
        if carry:
            h, c = out["h_out"], out["c_out"]
    return outs


def check_chunk(out, k):
    assert list(out) == ["probs", "h_out", "c_out"]
    close(out["probs"], ref(f"probs.{k}.npy"))
    close(out["h_out"], ref(f"h_out.{k}.npy"))
    close(out["c_out"], ref(f"c_out.{k}.npy"))


def test_lstm_declares_its_state_and_scalar_inputs(lstm):
    assert lstm.inputs == [
        disco.TensorInfo("ids", "int64", ("batch", "seq")),
        disco.TensorInfo("h", "float32", (1, "batch", 16)),
        disco.TensorInfo("c", "float32", (1, "batch", 16)),
        disco.TensorInfo("temperature", "float32", ()),
    ]


@pytest.mark.parametrize("temperature", [
    pytest.param(ref("temperature.npy"), id="0-d float32 array"),
    pytest.param(0.7, id="python float"),
    pytest.param(np.float32(0.7), id="numpy float32 scalar"),
])
def test_lstm_state_carried_over_three_chunks_matches_pytorch(lstm, temperature):
    outs = run_stream(lstm, temperature)
    for k, out in zip(CHUNKS, outs):
        check_chunk(out, k)
    assert lstm.last_run_copied == []  # the fed-back outputs were read in place


def test_lstm_without_the_carried_state_misses_chunk_two(lstm):
    outs = run_stream(lstm, 0.7, carry=False)
    check_chunk(outs[0], 1)  # chunk 1 starts from h0, c0 either way
    assert not np.allclose(outs[1]["h_out"], ref("h_out.2.npy"), rtol=1e-4, atol=1e-5)
    assert not np.allclose(outs[1]["probs"], ref("probs.2.npy"), rtol=1e-4, atol=1e-5)


def test_lstm_temperature_is_an_input_not_a_constant(lstm):
    # At temperature 1.0 the probabilities differ from the references (taken at 0.7).
    out = lstm.run(ids=ref("ids.1.npy"), h=ref("h0.npy"), c=ref("c0.npy"), temperature=1.0)
    close(out["h_out"], ref("h_out.1.npy"))  # the state does not depend on it
    assert not np.allclose(out["probs"], ref("probs.1.npy"), rtol=1e-4, atol=1e-5)


def test_flip_state_fed_back_output_is_read_whole(flip):
    # The previous output array is passed as the next s, in place: the run must
    # read all of s before anything writes s_out, and must leave s as it was.
    s = ref("flip_s0.npy")
    for k in CHUNKS:
        before = s.copy()
        out = flip.run(s, ref(f"flip_x.{k}.npy"))
        assert flip.last_run_copied == []
        close(out["s_out"], ref(f"flip_s_out.{k}.npy"))
        np.testing.assert_array_equal(s, before)  # the input array was not written
        s = out["s_out"]


def test_flip_state_without_feeding_back_misses_step_two(flip):
    s0 = ref("flip_s0.npy")
    close(flip.run(s0, ref("flip_x.1.npy"))["s_out"], ref("flip_s_out.1.npy"))
    stale = flip.run(s0, ref("flip_x.2.npy"))["s_out"]
    assert not np.allclose(stale, ref("flip_s_out.2.npy"), rtol=1e-4, atol=1e-5)
