"""The ONNX copy of a BERT-style sentence-transformers model, written from its weights without torch.

Why: the default install must not need torch (754 MB of a 1.7 GB venv, and on Linux PyPI's torch brings
gigabytes of CUDA packages) for a model memapp runs in onnxruntime. A BERT encoder is a short, fixed
graph: embeddings (word + position + token type, LayerNorm), then per layer self-attention (query, key
and value projections, scaled dot products with the padding mask, softmax), an output projection with a
residual LayerNorm, and a GELU feed-forward block with another. This module writes that graph with
`onnx.helper` and the weights read straight from `model.safetensors` (a JSON header and raw
little-endian arrays), so an installed package makes the same file torch.onnx.export made, with no
torch, in about a second.

The nodes are named as torch.onnx names a Hugging Face BERT (`/encoder/layer.N/attention/self/query/
MatMul`, ...), so the int8 plans of embeddings.onnx_quantize find the same weight MatMuls. Its output is
checked against sentence-transformers in tests/embeddings/test_onnx_build.py (cosine of every text's
vector), with the reference backend installed (`pip install memapp[reference]`).
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

# safetensors dtype names -> numpy dtypes (the ones a BERT checkpoint holds)
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "BF16": None}


class UnsupportedModel(ValueError):
    """The model is not a BERT-style encoder with safetensors weights; the torch export is needed."""


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file as a float32/int64 numpy array (bfloat16 widened)."""
    with open(path, "rb") as fp:
        (header_len,) = struct.unpack("<Q", fp.read(8))
        header = json.loads(fp.read(header_len))
        data = fp.read()
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = data[start:end]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = bits.view(np.float32)
        elif info["dtype"] in _DTYPES:
            arr = np.frombuffer(raw, dtype=np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<"))
        else:
            raise UnsupportedModel(f"{path.name}: tensor {name} has dtype {info['dtype']}")
        out[name] = arr.reshape(info["shape"]).astype(np.float32 if arr.dtype.kind == "f" else np.int64)
    return out


def supports(transformer_dir: Path) -> bool:
    """Whether `transformer_dir` holds a model this builder writes (BERT, absolute positions, safetensors)."""
    try:
        config = json.loads((transformer_dir / "config.json").read_text())
    except (OSError, ValueError):
        return False
    return (
        config.get("model_type") == "bert"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and config.get("hidden_act") == "gelu"
        and (transformer_dir / "model.safetensors").is_file()
    )


class _Graph:
    """The nodes and weights being written, with torch.onnx-style names."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.nodes: list[object] = []
        self.initializers: list[object] = []
        self._done: set[str] = set()

    def weight(self, name: str, transpose: bool = False) -> str:
        """An initializer for checkpoint tensor `name` (a Linear's weight transposed for MatMul)."""
        from onnx import numpy_helper

        key = name + (".T" if transpose else "")
        if key not in self._done:
            arr = self.weights[name]
            arr = np.ascontiguousarray(arr.T) if transpose else arr
            self.initializers.append(numpy_helper.from_array(arr, key))
            self._done.add(key)
        return key

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        if name not in self._done:
            self.initializers.append(numpy_helper.from_array(value, name))
            self._done.add(name)
        return name

    def node(self, op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        from onnx import helper

        out = f"{name}_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def linear(self, x: str, prefix: str, scope: str) -> str:
        """x @ W.T + b, as two nodes named like torch's (`{scope}/MatMul`, `{scope}/Add`)."""
        mm = self.node("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)], f"{scope}/MatMul")
        return self.node("Add", [mm, self.weight(f"{prefix}.bias")], f"{scope}/Add")

    def layer_norm(self, x: str, prefix: str, scope: str, eps: float) -> str:
        return self.node(
            "LayerNormalization",
            [x, self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")],
            f"{scope}/LayerNormalization",
            axis=-1,
            epsilon=eps,
        )


def _embeddings(g: _Graph, eps: float) -> str:
    word = g.node("Gather", [g.weight("embeddings.word_embeddings.weight"), "input_ids"], "/embeddings/word")
    kind = g.node(
        "Gather", [g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], "/embeddings/type"
    )
    shape = g.node("Shape", ["input_ids"], "/embeddings/Shape")
    length = g.node(
        "Gather", [shape, g.const("one_i64", np.array(1, dtype=np.int64))], "/embeddings/length", axis=0
    )
    zero, step = g.const("zero_i64", np.array(0, dtype=np.int64)), g.const("one_i64", np.array(1, np.int64))
    positions = g.node("Range", [zero, length, step], "/embeddings/Range")
    pos = g.node(
        "Gather", [g.weight("embeddings.position_embeddings.weight"), positions], "/embeddings/position"
    )
    total = g.node("Add", [g.node("Add", [word, kind], "/embeddings/Add"), pos], "/embeddings/Add_1")
    return g.layer_norm(total, "embeddings.LayerNorm", "/embeddings/LayerNorm", eps)


def _mask(g: _Graph) -> str:
    """The additive padding mask, [batch, 1, 1, sequence]: 0 where attended, float32's minimum where not
    (as Hugging Face builds it)."""
    m = g.node("Cast", ["attention_mask"], "/mask/Cast", to=1)  # FLOAT
    m = g.node("Unsqueeze", [m, g.const("axes_1_2", np.array([1, 2], dtype=np.int64))], "/mask/Unsqueeze")
    inverted = g.node("Sub", [g.const("one_f32", np.array(1.0, dtype=np.float32)), m], "/mask/Sub")
    lowest = g.const("lowest_f32", np.array(np.finfo(np.float32).min, dtype=np.float32))
    return g.node("Mul", [inverted, lowest], "/mask/Mul")


def _attention(g: _Graph, x: str, mask: str, i: int, heads: int, hidden: int, eps: float) -> str:
    p, s = f"encoder.layer.{i}.attention", f"/encoder/layer.{i}/attention"
    per_head = g.const(f"heads_shape_{heads}", np.array([0, 0, heads, hidden // heads], dtype=np.int64))
    split = {}
    for part in ("query", "key", "value"):
        y = g.linear(x, f"{p}.self.{part}", f"{s}/self/{part}")
        y = g.node("Reshape", [y, per_head], f"{s}/self/{part}/Reshape")
        # [B, S, H, D] -> [B, H, S, D]; the key goes to [B, H, D, S] for the dot products
        perm = [0, 2, 3, 1] if part == "key" else [0, 2, 1, 3]
        split[part] = g.node("Transpose", [y], f"{s}/self/{part}/Transpose", perm=perm)
    scores = g.node("MatMul", [split["query"], split["key"]], f"{s}/self/MatMul")
    scale = g.const(f"scale_{hidden // heads}", np.array(math.sqrt(hidden // heads), dtype=np.float32))
    scores = g.node("Add", [g.node("Div", [scores, scale], f"{s}/self/Div"), mask], f"{s}/self/Add")
    probs = g.node("Softmax", [scores], f"{s}/self/Softmax", axis=-1)
    context = g.node("MatMul", [probs, split["value"]], f"{s}/self/MatMul_1")
    context = g.node("Transpose", [context], f"{s}/self/Transpose", perm=[0, 2, 1, 3])
    merged = g.const(f"merged_shape_{hidden}", np.array([0, 0, hidden], dtype=np.int64))
    context = g.node("Reshape", [context, merged], f"{s}/self/Reshape")
    out = g.linear(context, f"{p}.output.dense", f"{s}/output/dense")
    residual = g.node("Add", [out, x], f"{s}/output/Add")
    return g.layer_norm(residual, f"{p}.output.LayerNorm", f"{s}/output/LayerNorm", eps)


def _feed_forward(g: _Graph, x: str, i: int, eps: float) -> str:
    p, s = f"encoder.layer.{i}", f"/encoder/layer.{i}"
    h = g.linear(x, f"{p}.intermediate.dense", f"{s}/intermediate/dense")
    # GELU exactly as BERT's "gelu": 0.5 * h * (1 + erf(h / sqrt(2)))
    erf = g.node(
        "Erf",
        [g.node("Div", [h, g.const("sqrt2", np.array(math.sqrt(2.0), np.float32))], f"{s}/intermediate/Div")],
        f"{s}/intermediate/Erf",
    )
    erf = g.node("Add", [erf, g.const("one_f32", np.array(1.0, np.float32))], f"{s}/intermediate/Add")
    h = g.node("Mul", [h, erf], f"{s}/intermediate/Mul")
    h = g.node("Mul", [h, g.const("half_f32", np.array(0.5, np.float32))], f"{s}/intermediate/Mul_1")
    out = g.linear(h, f"{p}.output.dense", f"{s}/output/dense")
    residual = g.node("Add", [out, x], f"{s}/output/Add")
    return g.layer_norm(residual, f"{p}.output.LayerNorm", f"{s}/output/LayerNorm", eps)


def build(transformer_dir: Path, dest: Path, opset: int) -> None:
    """Write the ONNX graph of the BERT in `transformer_dir` to `dest`: inputs input_ids, attention_mask,
    token_type_ids ([batch, sequence], int64), output token_embeddings ([batch, sequence, hidden])."""
    import onnx
    from onnx import TensorProto, helper

    if not supports(transformer_dir):
        raise UnsupportedModel(f"{transformer_dir} is not a BERT model with safetensors weights")
    config = json.loads((transformer_dir / "config.json").read_text())
    weights = {
        k.removeprefix("bert."): v for k, v in read_safetensors(transformer_dir / "model.safetensors").items()
    }
    eps, heads, hidden = (
        float(config["layer_norm_eps"]),
        int(config["num_attention_heads"]),
        int(config["hidden_size"]),
    )
    g = _Graph(weights)
    x = _embeddings(g, eps)
    mask = _mask(g)
    for i in range(int(config["num_hidden_layers"])):
        x = _feed_forward(g, _attention(g, x, mask, i, heads, hidden, eps), i, eps)
    g.nodes.append(helper.make_node("Identity", [x], ["token_embeddings"], name="/output/Identity"))
    axes = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, axes)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, [*axes, hidden])
    graph = helper.make_graph(g.nodes, "bert", inputs, [output], initializer=g.initializers)  # type: ignore[arg-type]
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="memapp")
    model.ir_version = 8  # onnxruntime 1.17+ reads IR 8 (opset 17)
    onnx.checker.check_model(model)
    onnx.save(model, str(dest))
