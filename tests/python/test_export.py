# Model.export: what `disco compile MODEL -o OUTDIR/NAME` writes.
import pytest

import disco

torch = pytest.importorskip("torch")


def test_export_writes_the_library_and_the_header(mlp, tmp_path):
    model = disco.from_torch(mlp, torch.randn(2, 8), dynamic_axes={"input0": {0: "batch"}, "output0": {0: "batch"}})
    files = model.export(tmp_path / "out", "tiny_mlp")
    archive, header = tmp_path / "out" / "tiny_mlp.a", tmp_path / "out" / "tiny_mlp.h"
    assert files["archive"] == str(archive) and files["header"] == str(header)
    assert archive.stat().st_size > 0
    assert archive.read_bytes().startswith(b"!<arch>\n")
    text = header.read_text()
    assert "tiny_mlp_run(" in text
    assert "batch" in text  # the input's symbolic dim is declared in the header


def test_export_of_a_static_compile_raises_disco_error(mlp, tmp_path):
    model = disco.from_torch(mlp, torch.randn(2, 8), dynamic_axes={"input0": {0: "batch"}}, static={"input0": (2, 8)})
    with pytest.raises(disco.Error, match=r"static shapes"):
        model.export(tmp_path, "tiny_mlp")


def test_export_with_a_name_that_is_not_a_c_identifier_raises_disco_error(mlp, tmp_path):
    model = disco.from_torch(mlp, torch.randn(2, 8))
    with pytest.raises(disco.Error):
        model.export(tmp_path, "not-an-identifier")
