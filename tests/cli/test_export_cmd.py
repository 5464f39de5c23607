import subprocess
import sys

from fxstudio import cli
from tests.conftest import run_fxstudio


def test_export_writes_a_module_that_runs_without_fxstudio(tmp_path, capsys):
    out = tmp_path / "net.py"
    assert cli.main(["export", "examples:resnet", "-o", str(out), "--verify"]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and "bit for bit" in printed
    script = (
        "import sys, torch\n"
        "sys.modules['fxstudio'] = None  # fxstudio must not be needed\n"
        "from net import load\n"
        "print(tuple(load()(torch.randn(2, 3, 32, 32)).shape))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(2, 10)"


def test_verify_a_module_saved_under_a_relative_path(tmp_path, monkeypatch, capsys):
    """`fxstudio export MODEL -o g.py --verify`, as typed in a folder (the check runs in a
    temporary folder of its own)."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["export", "examples:simple", "-o", "g.py", "--verify"]) == 0
    assert "bit for bit" in capsys.readouterr().out


def test_export_refuses_to_overwrite_without_force(tmp_path, capsys):
    out = tmp_path / "m.py"
    out.write_text("# keep me\n")
    assert cli.main(["export", "examples:simple", "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "# keep me\n"
    assert cli.main(["export", "examples:simple", "-o", str(out), "--force"]) == 0
    assert "class Model" in out.read_text()


def test_export_formats(tmp_path, capsys):
    for name, extra in [("f.py", ["--format", "code"]), ("m.pt", []), ("m.pt2", [])]:
        assert cli.main(["export", "examples:negrelu", "-o", str(tmp_path / name), *extra]) == 0
    assert "def forward(self, x, y, z)" in (tmp_path / "f.py").read_text()
    assert (tmp_path / "m.pt").stat().st_size > 0 and (tmp_path / "m.pt2").stat().st_size > 0


def test_export_bad_name_and_untraceable_model(tmp_path, capsys):
    assert cli.main(["export", "examples:simple", "-o", str(tmp_path / "m.txt")]) == 2
    assert "Cannot tell the format" in capsys.readouterr().err
    assert cli.main(["export", "examples:branchy", "-o", str(tmp_path / "b.py")]) == 2
    assert "branchy.py:" in capsys.readouterr().err
    assert not (tmp_path / "b.py").exists()


def test_export_in_a_real_process(tmp_path):
    result = run_fxstudio(
        "export",
        "examples:transformer",
        "--frontend",
        "export",
        "-o",
        str(tmp_path / "t.py"),
        "--verify",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "bit for bit" in result.stdout
