"""Batching cases of one variant into a dispatch, and running it on the reference backend."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.core.shader import ShaderVariant
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.family import StrategyOptions
from ctsgen.families.tensor_layout import FAMILY
from ctsgen.strategies.sampling import draw_examples
from ctsgen.execute.batch import ALIGN_BYTES, build_batch, case_outputs

OPTS = StrategyOptions()


def shader_variant(v) -> ShaderVariant:
    return ShaderVariant(id=v.id, spirv=b"", local_size_x=v.local_size_x, buffers=v.buffers(),
                         family=FAMILY.name, signature=v.to_json())


@st.composite
def batches(draw):
    v = draw(FAMILY.variants(OPTS))
    cases = draw(st.lists(FAMILY.cases_for(v, OPTS), min_size=1, max_size=6))
    return v, cases


@settings(max_examples=60)
@given(batches())
def test_batch_layout_and_reference_results(vc):
    v, cases = vc
    sv = shader_variant(v)
    data = [c.data() for c in cases]
    batch = build_batch(sv, [d.params for d in data], [d.initial for d in data])
    n, nb = len(cases), len(sv.buffers)
    assert batch.dispatch.workgroups == n and batch.offsets.shape == (n, nb)
    # offsets are 16-byte aligned and the regions do not overlap
    for b, spec in enumerate(sv.buffers):
        size = np.dtype(spec.dtype).itemsize
        assert (batch.offsets[:, b] * size % ALIGN_BYTES == 0).all()
        ends = batch.offsets[:, b] + batch.lengths[:, b]
        assert (ends[:-1] <= batch.offsets[1:, b]).all()
        assert ends[-1] <= batch.dispatch.buffers[b + 1].size
        assert batch.dispatch.buffers[b + 1].dtype == np.dtype(spec.dtype)
    # the parameter records carry the offsets, then the family words
    words = batch.dispatch.buffers[0]
    assert words.dtype == np.uint32
    rec = words.reshape(n, -1)
    for i, d in enumerate(data):
        assert rec[i, :nb].tolist() == batch.offsets[i].tolist()
        assert rec[i, nb:].tolist() == d.params.tolist()
    # before running, each case's slice is its initial data
    for i, d in enumerate(data):
        for got, want in zip(case_outputs(batch, batch.dispatch.buffers, i), d.initial):
            assert got.tobytes() == np.ascontiguousarray(want).tobytes()
    # the reference backend's results equal each case's expected data, bit for bit
    out = ReferenceBackend().run(batch.dispatch, 10.0)
    for i, d in enumerate(data):
        outs = case_outputs(batch, out, i)
        for b, want in enumerate(d.expected):
            if want is None:
                continue
            assert outs[b].tobytes() == want.tobytes(), (cases[i], b)
    # the dispatch's own buffers were not modified by the backend
    for i, d in enumerate(data):
        for got, want in zip(case_outputs(batch, batch.dispatch.buffers, i), d.initial):
            assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def test_empty_batch_and_wrong_dtype_are_rejected():
    v = draw_examples(FAMILY.variants(OPTS), 1, 7)[0]
    sv = shader_variant(v)
    with pytest.raises(ValueError):
        build_batch(sv, [], [])
    c = draw_examples(FAMILY.cases_for(v, OPTS), 1, 7)[0]
    d = c.data()
    wrong = [d.initial[0].astype(np.float64), d.initial[1]]
    with pytest.raises(ValueError, match="dtype"):
        build_batch(sv, [d.params], [wrong])


def test_odd_sized_uint8_cases_stay_aligned():
    from ctsgen.core.shader import BufferSpec
    sv = ShaderVariant(id="x", spirv=b"", local_size_x=32, buffers=(BufferSpec(1, "input", "uint8"),))
    arrays = [[np.arange(k, dtype=np.uint8)] for k in (1, 17, 0, 33, 16)]
    batch = build_batch(sv, [np.zeros(2, np.uint32)] * 5, arrays)
    assert batch.offsets[:, 0].tolist() == [0, 16, 48, 64, 112]
    for i, a in enumerate(arrays):
        assert case_outputs(batch, batch.dispatch.buffers, i)[0].tolist() == a[0].tolist()
