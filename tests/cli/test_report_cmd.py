"""``fxstudio report`` and ``fxstudio diff --html/--fail-on-change`` headless: the page written
and said, bad output names refused before any work (exit 2, nothing written), and the CI
check's exit status: 0 for the same graph, 3 when the structure changed."""

from __future__ import annotations

from fxstudio import cli


def test_report_writes_one_page_and_says_what_it_holds(tmp_path, capsys):
    out = tmp_path / "report.html"
    assert cli.main(["report", "examples:resnet", "-o", str(out), "--memory"]) == 0
    said = capsys.readouterr()
    assert said.out.startswith("report of examples:resnet: 54 nodes drawn")
    assert "sections: memory" in said.out and f"wrote {out}" in said.err
    page = out.read_text()
    assert page.startswith("<!doctype html>") and page.count('<g class="node"') == 54


def test_report_refuses_a_name_that_is_not_html_and_an_existing_file(tmp_path, capsys):
    assert cli.main(["report", "examples:simple", "-o", str(tmp_path / "r.svg")]) == 2
    assert "name it OUT.html" in capsys.readouterr().err
    assert not (tmp_path / "r.svg").exists()
    out = tmp_path / "r.html"
    out.write_text("mine")
    assert cli.main(["report", "examples:simple", "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and out.read_text() == "mine"


def test_diff_fail_on_change_is_a_graph_regression_check(tmp_path, capsys):
    same = ["diff", "examples:resnet", "examples:resnet", "--no-values", "--fail-on-change"]
    assert cli.main(same) == 0
    out = tmp_path / "fold.html"
    folded = ["diff", "examples:resnet", "--rewrite", "fold-conv-bn", "--no-values"]
    assert cli.main([*folded, "--html", str(out), "--fail-on-change"]) == 3
    err = capsys.readouterr().err
    assert "differ in structure (30 nodes removed, added or changed)" in err
    page = out.read_text()
    assert 'data-pane="left"' in page and 'data-pane="right"' in page
    assert page.count('<g class="node"') == 54 + 39
