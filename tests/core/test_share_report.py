"""The report's page without a browser: what a session holds is in it (its edits in order,
each rewrite checked again), as sections and as the page's JSON; the page needs nothing from
outside (no URL, its CSP forbids every request); a profile against a baseline brings its
before/after with the confidence interval; a compare its counts and first divergence.
(The page in Chromium: tests/browser.)"""

from __future__ import annotations

import html
import json
import re

from fxstudio.core.edits import set_target
from fxstudio.core.flows import (
    ProfileOptions,
    RewriteRequest,
    RewriteSpec,
    open_document,
    rewrite_flow,
)
from fxstudio.core.flows.memory import MemoryRequest, memory_flow
from fxstudio.core.flows.report import ReportRequest, report_flow
from fxstudio.core.flows.save import save_session
from fxstudio.core.share.htmlreport import page_data, report_html


def _page_json(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="fx-data">(.*?)</script>', html, re.S)
    assert found is not None
    return json.loads(found.group(1))


def test_a_session_report_holds_its_edits_in_order_each_rewrite_checked_again(tmp_path):
    doc = open_document("examples:resnet")
    rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    set_target(doc, "add", "torch.add")
    path = tmp_path / "s.fxstudio"
    save_session(doc, path)
    result = report_flow(ReportRequest(str(path), memory=True))
    history = result.data["history"]
    assert [h["edit"] for h in history] == ["rewrite", "set_target"]
    assert history[0]["label"] == "fold-conv-bn (15 matches)"
    assert history[0]["check"]["ok"] and "Check passed on 3 inputs" in history[0]["check"]["text"]
    assert "check" not in history[1]  # an edit by hand: no numerical check
    html = result.html
    assert html.index("fold-conv-bn (15 matches)") < html.index("Change add to torch.add")
    assert _page_json(html) == json.loads(json.dumps(result.to_json(), default=str))
    assert result.nodes == len(doc) == 39
    assert html.count('<g class="node"') == 39  # one drawing: every node, modules expanded
    assert "<?xml" not in html and '<section id="memory">' in html
    assert "Peak</b> 204.0 KiB" in html


def test_the_page_asks_for_nothing_outside_itself():
    result = report_flow(ReportRequest("examples:transformer", memory=True))
    html = result.html
    assert "default-src 'none'" in html  # the browser refuses any request the page made
    assert not re.search(r"\b(src|href)\s*=\s*[\"'](?!#)", html)  # only links within the page
    assert not re.search(r"url\(|@import|https?://(?!www\.w3\.org/2000/svg)", html)


def test_a_profile_against_a_baseline_gives_before_after_with_its_interval():
    doc = open_document("examples:resnet")
    rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    options = ProfileOptions(min_time=0.02, per_node=True, calls=5)
    result = report_flow(
        ReportRequest(doc, against="examples:resnet", profile=options, values=False)
    )
    profile, compare = result.data["profile"], result.data["compare"]
    assert profile["compare"]["ci_low"] <= profile["compare"]["speedup"]
    assert profile["compare"]["speedup"] <= profile["compare"]["ci_high"]
    calls = {n.name for n in doc.graph.nodes if n.op not in ("placeholder", "output")}
    assert {n["name"] for n in profile["nodes"]} == calls
    html = result.html
    assert "Before/after:</b>" in html and "95% CI" in html and "Per module" in html
    assert '<option value="profile">' in html  # the heat by time
    assert compare["structural"] == result.structural == 30 and "values" not in compare
    assert html.count('<g class="node"') == 39 + 54 + 39  # the graph, then both sides


ATTENTION = """import torch


class Attn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(16, 16) for _ in range(3))

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        return torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1) @ v


def example_inputs():
    return (torch.randn(1, 256, 16),)
"""


def _shown(page: str, section: str) -> str:
    """The text a reader sees of a section of the page (its tags dropped)."""
    found = re.search(f'<section id="{section}">(.*?)</section>', page, re.S)
    assert found is not None, section
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def test_the_memory_section_shows_the_peak_before_and_after_and_the_measured_peak(write_model):
    """A rewrite's finding is in the section a reader sees, not only in the page's JSON: the
    fused attention no longer makes the 256x256 scores (544 KiB -> 80 KiB)."""
    path = write_model(ATTENTION, "attn.py")
    before, after = open_document(f"{path}:Attn"), open_document(f"{path}:Attn")
    rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    # as the Memory dock hands it in: estimated and measured, against the graph before
    memory = memory_flow(after, MemoryRequest(measure=True), against=before)
    shown = _shown(report_flow(ReportRequest(after, memory=memory)).html, "memory")
    assert "Before → after (against " in shown
    assert "peak 544.0 KiB → 80.0 KiB (−464.0 KiB, −85.3%)" in shown
    assert re.search(r"measured peak [\d.]+ KiB → [\d.]+ KiB \(−[\d.]+ KiB, −\d", shown)
    assert "no longer made: 4 value(s), 784.0 KiB in all" in shown
    measured = re.search(r"Measured peak ([\d.]+) KiB at node (\w+) on cpu, ([\d.]+)×", shown)
    assert measured is not None and float(measured.group(1)) > 0
    assert "the estimate (80.0 KiB)" in shown
    # fxstudio report --against --memory: the same finding, estimated (nothing measured)
    shown = _shown(report_flow(ReportRequest(after, against=before, memory=True)).html, "memory")
    assert "peak 544.0 KiB → 80.0 KiB (−464.0 KiB, −85.3%)" in shown
    assert "Measured" not in shown and "measured" not in shown


def test_a_compare_says_its_first_divergence():
    result = report_flow(ReportRequest("examples:negrelu", against="examples:simple"))
    compare = result.data["compare"]
    assert compare["structural"] > 0 and compare["titles"] == [
        "examples:simple",
        "examples:negrelu",
    ]
    assert compare.get("values_problem") or compare["values"]["first_difference"]


def test_the_page_json_is_safe_inside_its_script_element():
    text = page_data({"a": float("nan"), "b": float("inf"), "c": "</script><!--"})
    assert json.loads(text) == {"a": None, "b": None, "c": "</script><!--"}
    assert "<" not in text
    page = report_html({"title": "</title><script>alert(1)</script>"})
    assert "<script>alert(1)" not in page
