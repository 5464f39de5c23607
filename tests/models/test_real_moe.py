"""Mixture-of-experts transformers models: their experts call an operator transformers
registers when ``transformers.integrations.moe`` is imported, which the saved module must
import too."""

import importlib.util

import pytest

from fxstudio.core.saving.export import export
from fxstudio.core.saving.verify import verify_standalone
from fxstudio.core.sessions.documents import open_document
from tests.conftest import run_fxstudio

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None, reason="transformers is not installed"
)

MIXTRAL = (
    "hf:mixtral(num_hidden_layers=2, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, vocab_size=128)"
)
QWEN3_MOE = (
    "hf:qwen3_moe(num_hidden_layers=2, hidden_size=64, intermediate_size=128, "
    "moe_intermediate_size=32, num_attention_heads=4, num_key_value_heads=2, num_experts=4, "
    "num_experts_per_tok=2, head_dim=16, vocab_size=128)"
)
IMPORT = "import transformers.integrations.moe  # torch.ops.transformers.grouped_mm_fallback"


def test_a_saved_mixtral_runs_in_a_fresh_process(tmp_path):
    """`fxstudio export MODEL -o out.py --verify`, as a user types it."""
    out = tmp_path / "mixtral.py"
    result = run_fxstudio("export", MIXTRAL, "-o", str(out), "--verify", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "bit for bit" in result.stdout
    source = out.read_text()
    assert "torch.ops.transformers.grouped_mm_fallback.default(" in source
    assert IMPORT in source


def test_a_saved_qwen3_moe_runs_in_a_fresh_process(tmp_path):
    doc = open_document(QWEN3_MOE)
    out = tmp_path / "qwen3_moe.py"
    export(doc, out)
    assert IMPORT in out.read_text()
    check = verify_standalone(out, doc)
    assert check.ok, check
