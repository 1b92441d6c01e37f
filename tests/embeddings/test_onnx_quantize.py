"""The int8 copy of an ONNX encoder: which MatMuls a plan quantises, SmoothQuant leaving the float
function unchanged, and the file written safely (issue 19). Tiny hand-made graphs, no model."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from embeddings.onnx_quantize import PLANS, Plan, drop_nan_guards, quantize, smooth, weight_matmuls

# The real model's sizes (all-MiniLM-L6-v2: hidden 384, FFN 1,536). With tiny ones (16 / 32) the int8
# result depended on the CPU: without VNNI, onnxruntime's uint8 x int8 kernel (AVX2's vpmaddubsw) saturates
# sums of two products, and over 16 inputs that cost the test graph cosine 0.3-0.9 against float32 on an
# AVX2-only EPYC, where AVX-512 VNNI machines gave > 0.95; at these sizes both give what the real model
# gives (0.97-0.99), which tests/embeddings/test_onnx.py checks on the real weights.
DIM, HIDDEN = 384, 1536


def two_layer_graph(path: Path, seed: int = 0) -> Path:
    """x (1, n, DIM) -> per layer: query MatMul, attention output MatMul, FFN in MatMul + Relu, FFN out
    MatMul, named as torch.onnx names a BERT encoder's; one input channel of x is 30x the others (the
    activation outlier SmoothQuant is for)."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    cur = "x"
    for layer in range(2):
        base = f"/inner/encoder/layer.{layer}"
        specs = [
            ("attention/self/query/MatMul", DIM, DIM),
            ("attention/output/dense/MatMul", DIM, DIM),
            ("intermediate/dense/MatMul", DIM, HIDDEN),
            ("output/dense/MatMul", HIDDEN, DIM),
        ]
        for name, k, n in specs:
            w = f"w_{layer}_{name}"
            inits.append(
                numpy_helper.from_array((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32), w)
            )
            out = f"{base}/{name}_out"
            nodes.append(helper.make_node("MatMul", [cur, w], [out], name=f"{base}/{name}"))
            cur = out
            if name.startswith("intermediate"):
                nodes.append(helper.make_node("Relu", [cur], [cur + "_relu"], name=f"{base}/relu"))
                cur = cur + "_relu"
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, None, DIM])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None, DIM])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def inputs(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((1, n, DIM)).astype(np.float32)
    x[..., 3] *= 30.0
    return x


def run(path: Path | bytes, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(
        path if isinstance(path, bytes) else str(path), providers=["CPUExecutionProvider"]
    )
    return np.asarray(sess.run(None, {"x": x})[0])


def test_matmuls_are_found_by_layer_and_role(tmp_path: Path) -> None:
    mms = weight_matmuls(onnx.load(str(two_layer_graph(tmp_path / "f.onnx"))))
    assert [(m.layer, m.role) for m in mms] == [
        (layer, role) for layer in (0, 1) for role in ("qkv", "attn_out", "ffn_in", "ffn_out")
    ]
    keep_out, keep_last = PLANS["keep-ffn-out"], Plan("last", keep_layers=frozenset({-1}))
    assert [m.role for m in mms if keep_out.keeps(m, 2)] == ["ffn_out", "ffn_out"]
    assert {m.layer for m in mms if keep_last.keeps(m, 2)} == {1}
    assert not any(PLANS["all"].keeps(m, 2) for m in mms)


def test_a_plan_leaves_its_matmuls_float_and_quantises_the_rest(tmp_path: Path) -> None:
    src = two_layer_graph(tmp_path / "f.onnx")
    dest = tmp_path / "cache" / "q.onnx"
    kept = quantize(src, dest, PLANS["keep-ffn-out"])
    assert kept == [
        "/inner/encoder/layer.0/output/dense/MatMul",
        "/inner/encoder/layer.1/output/dense/MatMul",
    ]
    q = onnx.load(str(dest))
    float_matmuls = [n.name for n in q.graph.node if n.op_type == "MatMul"]
    assert sorted(float_matmuls) == sorted(kept)
    assert sum(n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul") for n in q.graph.node) == 6
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    assert [p.name for p in dest.parent.iterdir()] == ["q.onnx"]  # no temporary file left
    x = inputs(40, 1)
    ref, got = run(src, x), run(dest, x)
    cos = (ref * got).sum(-1) / np.linalg.norm(ref, axis=-1) / np.linalg.norm(got, axis=-1)
    assert cos.min() > 0.95  # int8 is close to float32, not equal
    assert not np.allclose(ref, got, atol=1e-4)


def test_smoothing_keeps_the_float_function_and_evens_the_outlier_channel(tmp_path: Path) -> None:
    src = two_layer_graph(tmp_path / "f.onnx")
    model = onnx.load(str(src))
    names = [m.node for m in weight_matmuls(model)]
    feeds = [{"x": inputs(30, s)} for s in range(4)]
    smooth(model, names, feeds, 0.5)
    x = inputs(50, 9)
    np.testing.assert_allclose(run(model.SerializeToString(), x), run(src, x), rtol=1e-4, atol=1e-4)
    inv = numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == "x/smooth_inv"))
    assert int(np.argmin(inv)) == 3  # the outlier channel is divided most
    muls = [n for n in model.graph.node if n.op_type == "Mul"]
    assert len(muls) == 8 and muls[0].name == "x/smooth"


def test_smoothing_helps_int8_on_an_outlier_channel(tmp_path: Path) -> None:
    src = two_layer_graph(tmp_path / "f.onnx")
    plain = tmp_path / "plain.onnx"
    quantize(src, plain, PLANS["all"])
    model = onnx.load(str(src))
    smooth(model, [m.node for m in weight_matmuls(model)], [{"x": inputs(30, s)} for s in range(4)], 0.5)
    smoothed_src = tmp_path / "smoothed-f.onnx"
    onnx.save(model, str(smoothed_src))
    smoothed = tmp_path / "smoothed.onnx"
    quantize(smoothed_src, smoothed, PLANS["all"])
    x = inputs(60, 11)
    ref = run(src, x)
    err_plain = np.abs(run(plain, x) - ref).mean()
    err_smooth = np.abs(run(smoothed, x) - ref).mean()
    assert err_smooth < err_plain


def test_the_softmax_nan_guard_is_dropped_and_nothing_else_changes(tmp_path: Path) -> None:
    """x -> Softmax -> Where(IsNaN(s), 0, s) -> MatMul: the guard goes, the MatMul reads the softmax."""
    w = numpy_helper.from_array(np.eye(DIM, dtype=np.float32) * 2, "w")
    zero = numpy_helper.from_array(np.zeros((), dtype=np.float32), "zero")
    nodes = [
        helper.make_node("Softmax", ["x"], ["s"], name="sm", axis=-1),
        helper.make_node("IsNaN", ["s"], ["nan"], name="isnan"),
        helper.make_node("Where", ["nan", "zero", "s"], ["guarded"], name="where"),
        helper.make_node("MatMul", ["guarded", "w"], ["y"], name="mm"),
    ]
    graph = helper.make_graph(
        nodes,
        "guard",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, None, DIM])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None, DIM])],
        [w, zero],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = inputs(7, 2)
    before = run(model.SerializeToString(), x)
    assert drop_nan_guards(model) == 1
    assert [n.op_type for n in model.graph.node] == ["Softmax", "MatMul"]
    assert list(model.graph.node[1].input) == ["s", "w"]
    np.testing.assert_array_equal(run(model.SerializeToString(), x), before)
    assert drop_nan_guards(model) == 0
