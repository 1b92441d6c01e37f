"""An int8 copy of the model's ONNX file: which weight MatMuls to quantise, and writing it safely.

Why: on a 2-core CPU the float32 transformer runs at the machine's floating-point peak (about 22
chunks of ~200 word pieces per CPU-second), so an import is bound by the model's arithmetic; int8
weights and activations run the same MatMuls on the CPU's integer dot-product units: 3x the chunks per
CPU-second (bench/tune/quantize.py). What it may cost is search quality, so the plan (which MatMuls stay float32) is chosen by
bench/tune/quantize.py on the evaluation's tuning half, and the choice is recorded here, not guessed.

onnxruntime's dynamic quantisation is used: weights int8 per output channel, activations uint8 with a
scale computed per call over the whole input tensor. That per-call scale is why the int8 encoder runs
one text per call (embeddings.onnx_embedder): inside a padded batch a text's vector would depend on its
neighbours (cosine down to 0.978 measured between a text alone and in a batch), and a query embedded alone
would not match the same text stored from a batch.

The MatMuls are found by the node names torch.onnx gives a Hugging Face BERT-style encoder
(`.../layer.N/attention/self/query/MatMul`, `.../intermediate/dense/MatMul`, ...). A model whose names do
not follow that pattern gets every weight MatMul quantised (the `all` plan).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROLES = ("qkv", "attn_out", "ffn_in", "ffn_out")
_ROLE_PATTERNS = (
    ("qkv", re.compile(r"/attention/self/(query|key|value)/")),
    ("attn_out", re.compile(r"/attention/output/dense/")),
    ("ffn_in", re.compile(r"/intermediate/dense/")),
    ("ffn_out", re.compile(r"/output/dense/")),
)
_LAYER = re.compile(r"layer\.(\d+)/")


@dataclass(frozen=True)
class WeightMatMul:
    """A MatMul whose second input is a weight (an initializer): what dynamic quantisation converts."""

    node: str
    layer: int | None
    role: str | None


@dataclass(frozen=True)
class Plan:
    """Which weight MatMuls stay float32: every one with a role in `keep_roles` or a layer in
    `keep_layers` (negative layers count from the last). `smooth`: SmoothQuant's alpha (None: off)."""

    name: str
    keep_roles: frozenset[str] = field(default_factory=frozenset)
    keep_layers: frozenset[int] = field(default_factory=frozenset)
    smooth: float | None = None

    def keeps(self, mm: WeightMatMul, n_layers: int) -> bool:
        if mm.role in self.keep_roles:
            return True
        layers = {k % n_layers for k in self.keep_layers} if n_layers else set()
        return mm.layer is not None and mm.layer in layers


PLANS = {
    p.name: p
    for p in (
        Plan("all"),
        Plan("keep-ffn-out", keep_roles=frozenset({"ffn_out"})),
        Plan("ffn-only", keep_roles=frozenset({"qkv", "attn_out"})),
        Plan("keep-last", keep_layers=frozenset({-1})),
        Plan("keep-first-last", keep_layers=frozenset({0, -1})),
        Plan("keep-ffn-out-last", keep_roles=frozenset({"ffn_out"}), keep_layers=frozenset({-1})),
        Plan("smooth", smooth=0.5),
        Plan("smooth-keep-ffn-out", keep_roles=frozenset({"ffn_out"}), smooth=0.5),
    )
}

# The plan the int8 encoder uses, chosen by bench/tune/quantize.py on the evaluation's tune half: the fastest
# plan within 0.01 recall@10 of float32 (README "Benchmarks").
INT8_PLAN = "all"


def weight_matmuls(model: object) -> list[WeightMatMul]:
    """The MatMuls of an onnx.ModelProto whose B input is an initializer, with layer and role when the
    names say them."""
    graph = model.graph  # type: ignore[attr-defined]
    weights = {init.name for init in graph.initializer}
    out = []
    for node in graph.node:
        if node.op_type != "MatMul" or len(node.input) < 2 or node.input[1] not in weights:
            continue
        role = next((r for r, pat in _ROLE_PATTERNS if pat.search(node.name)), None)
        layer = _LAYER.search(node.name)
        out.append(WeightMatMul(node.name, int(layer.group(1)) if layer else None, role))
    return out


def drop_nan_guards(model: Any) -> int:
    """Remove `Where(IsNaN(x), 0, x)` after each attention softmax (torch's export adds it for rows whose
    every key is masked, which cannot happen here: [CLS] and [SEP] are never masked). The guard reads and
    writes the whole batch x heads x sequence x sequence tensor twice per layer: 8% of the int8 encoder's
    time on 200-word-piece texts, for a function that is otherwise exactly the same. Returns how many."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            consumers[name] = consumers.get(name, 0) + 1
    graph_outputs = {o.name for o in graph.output}
    replace: dict[str, str] = {}
    dead: set[int] = set()
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3 or node.output[0] in graph_outputs:
            continue
        guard = producer.get(node.input[0])
        if guard is None or guard.op_type != "IsNaN" or guard.input[0] != node.input[2]:
            continue
        if producer.get(node.input[2]) is None or producer[node.input[2]].op_type != "Softmax":
            continue
        replace[node.output[0]] = node.input[2]
        dead.add(id(node))
        if consumers.get(guard.output[0]) == 1:
            dead.add(id(guard))
    kept = [n for n in graph.node if id(n) not in dead]
    for node in kept:
        for i, name in enumerate(node.input):
            if name in replace:
                node.input[i] = replace[name]
    del graph.node[:]
    graph.node.extend(kept)
    return len(replace)


def calibration_feeds(model_dir: Path, max_tokens: int) -> list[dict[str, np.ndarray]]:
    """Model inputs for SmoothQuant's activation ranges: the shipped demo's messages and memories (real
    chat text, always installed), one text per input, tokenized by the model's own tokenizer."""
    from tokenizers import Tokenizer

    from embeddings.data_files import data_file

    demo = data_file("demo.json")
    if demo is None:
        raise FileNotFoundError("data/demo.json (the calibration texts) is missing")
    data = json.loads(demo.read_text(encoding="utf-8"))
    texts = [m["content"] for t in data["threads"] for m in t["messages"]]
    texts += [m["content"] for m in data["memories"]]
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_length=max_tokens)
    tok.no_padding()
    feeds = []
    for enc in tok.encode_batch(texts):
        ids = np.asarray([enc.ids], dtype=np.int64)
        feeds.append(
            {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.asarray([enc.type_ids], dtype=np.int64),
            }
        )
    return feeds


def smooth(model: Any, nodes: list[str], feeds: list[dict[str, np.ndarray]], alpha: float) -> None:
    """SmoothQuant (Xiao et al. 2023), in place: a few activation channels of a transformer are far
    larger than the rest, and one int8 scale per tensor then leaves the others a handful of levels.
    Dividing each input channel by s_k = max|x_k|^alpha / max|w_k|^(1 - alpha) and multiplying the
    weight's row k by it leaves x @ W unchanged in exact arithmetic but evens out what is quantised. The
    division is one float Mul per distinct MatMul input (the three attention projections share one)."""
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    graph = model.graph
    inits = {init.name: init for init in graph.initializer}
    wanted = set(nodes)
    groups: dict[str, list[Any]] = {}
    for node in graph.node:
        if node.name in wanted:
            groups.setdefault(node.input[0], []).append(node)
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    for name in groups:
        probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    amax: dict[str, np.ndarray] = {}
    for feed in feeds:
        for name, x in zip(groups, session.run(list(groups), feed), strict=True):
            a = np.abs(x.reshape(-1, x.shape[-1])).max(axis=0)
            amax[name] = np.maximum(amax[name], a) if name in amax else a
    del session, probe
    position = {id(node): i for i, node in enumerate(graph.node)}
    inserts = []
    for name, consumers in groups.items():
        weights = [numpy_helper.to_array(inits[n.input[1]]) for n in consumers]
        wmax = np.max([np.abs(w).max(axis=1) for w in weights], axis=0)
        scale = np.maximum(amax[name], 1e-5) ** alpha / np.maximum(wmax, 1e-5) ** (1 - alpha)
        scale = np.clip(scale, 1e-2, 1e2).astype(np.float32)
        for n, w in zip(consumers, weights, strict=True):
            inits[n.input[1]].CopyFrom(
                numpy_helper.from_array((w * scale[:, None]).astype(np.float32), n.input[1])
            )
        inv = f"{name}/smooth_inv"
        graph.initializer.append(numpy_helper.from_array((1.0 / scale).astype(np.float32), inv))
        mul = helper.make_node("Mul", [name, inv], [f"{name}/smoothed"], name=f"{name}/smooth")
        for n in consumers:
            n.input[0] = f"{name}/smoothed"
        inserts.append((min(position[id(n)] for n in consumers), mul))
    for index, mul in sorted(inserts, key=lambda p: p[0], reverse=True):
        graph.node.insert(index, mul)


def quantize(
    src: Path, dest: Path, plan: Plan, model_dir: Path | None = None, max_tokens: int = 256
) -> list[str]:
    """Write the int8 copy of `src` to `dest` (atomically, mode 0600); returns the MatMuls left float32.
    `model_dir` (its tokenizer) is needed by a plan that smooths."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(src))
    drop_nan_guards(model)
    mms = weight_matmuls(model)
    n_layers = 1 + max((m.layer for m in mms if m.layer is not None), default=-1)
    kept = [m.node for m in mms if plan.keeps(m, n_layers)]
    if plan.smooth is not None:
        if model_dir is None:
            raise ValueError(f"plan {plan.name} smooths: it needs the model directory's tokenizer")
        feeds = calibration_feeds(model_dir, max_tokens)
        smooth(model, [m.node for m in mms if m.node not in kept], feeds, plan.smooth)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # .NAME.PID-RANDOM.tmp: embeddings.onnx_export.sweep_partials removes it if this process is killed
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.{os.getpid()}-", suffix=".tmp")
    os.close(fd)
    try:
        quantize_dynamic(
            model,
            tmp,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            reduce_range=False,
            weight_type=QuantType.QInt8,
            nodes_to_quantize=[m.node for m in mms if m.node not in kept],
            extra_options={"MatMulConstBOnly": True},
        )
        os.chmod(tmp, 0o600)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return kept
