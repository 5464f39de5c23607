"""Every code block in the README runs as written.

The README's blocks are read by their fence: ``python`` blocks run as scripts, ``sh``/``bash``
blocks of ``fxstudio`` commands run command by command (a trailing ``# exits N`` says the exit
status the README promises, 0 otherwise). The blocks of one section run in order in one
folder, so a file a block writes (``net.py``, ``fused.fxstudio``) is there for the next.
``my_model.py``, ``model.py`` and ``pats.py`` are the reader's own files the README speaks
of; the test writes small ones (:data:`USER_FILES`). Set-up blocks (``make …``, the
developer's commands) are not run here -- ``make test`` is what runs this file -- but each
``make`` line must be a target ``make -n`` accepts and each repository path they name must
exist. ``text`` blocks (the synopsis) and unlabelled ones (sample output) are not code.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: The reader's own files that README commands open.
USER_FILES = {
    "my_model.py": (
        "import torch\nfrom torch import nn\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3, padding=1)\n"
        "        self.fc = nn.Linear(8, 10)\n\n"
        "    def forward(self, x):\n"
        "        x = torch.relu(self.conv(x))\n"
        "        return self.fc(x.mean((2, 3)))\n"
    ),
    "model.py": (
        "import torch\nfrom torch import nn\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.ModuleList(nn.Linear(16, 16) for _ in range(4))\n\n"
        "    def forward(self, x):\n"
        "        for fc in self.fc:\n"
        "            x = torch.relu(fc(x)).neg()\n"
        "        return x\n\n\n"
        "def example_inputs():\n"
        "    return (torch.randn(2, 16),)\n"
    ),
    "pats.py": (
        "import torch\n\n\n"
        "def pattern(x):\n"
        "    return torch.relu(x).neg()\n\n\n"
        "def replacement(x):\n"
        "    return torch.clamp(x, min=0).neg()\n"
    ),
}

#: Sections whose shell blocks set up or build the project rather than use it.
SETUP_SECTIONS = {"Two commands", "A CUDA build of torch", "The desktop bundle", "Development"}


@dataclass
class Block:
    lang: str
    line: int
    text: str


@dataclass
class Section:
    title: str
    line: int
    blocks: list[Block] = field(default_factory=list)


def read_sections() -> list[Section]:
    sections = [Section("top", 1)]
    lines = README.read_text().splitlines()
    i = 0
    while i < len(lines):
        heading = re.match(r"#{2,3} (.+)", lines[i])
        if heading:
            sections.append(Section(heading.group(1).strip(), i + 1))
        fence = re.match(r"```(\w*)\s*$", lines[i])
        if fence:
            end = i + 1
            while not lines[end].startswith("```"):
                end += 1
            sections[-1].blocks.append(Block(fence.group(1), i + 1, "\n".join(lines[i + 1 : end])))
            i = end
        i += 1
    return [s for s in sections if s.blocks]


def commands(text: str) -> list[str]:
    """The block's commands, backslash continuations joined."""
    out: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line and not line.startswith("#"):
            out.append(line)
    return out


def expected_status(command: str) -> int:
    said = re.search(r"#\s*exits (\d+)", command)
    return int(said.group(1)) if said else 0


SECTIONS = read_sections()
RUNNABLE = [
    s
    for s in SECTIONS
    if s.title not in SETUP_SECTIONS and any(b.lang in ("python", "sh", "bash") for b in s.blocks)
]


def _env() -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONUNBUFFERED="1")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def test_readme_has_code_to_run():
    """The parser finds the README's blocks (a renamed fence would silently test nothing)."""
    langs = [b.lang for s in SECTIONS for b in s.blocks]
    assert langs.count("python") >= 2
    assert sum(1 for s in RUNNABLE for b in s.blocks if b.lang in ("sh", "bash")) >= 8
    for section in SECTIONS:
        for block in section.blocks:
            assert block.lang in ("", "text", "python", "sh", "bash"), (
                f"README line {block.line}: a ```{block.lang} block this test does not know"
            )


@pytest.mark.parametrize("section", RUNNABLE, ids=[f"L{s.line}-{s.title}" for s in RUNNABLE])
def test_readme_section_runs(section: Section, tmp_path: Path):
    for name, source in USER_FILES.items():
        (tmp_path / name).write_text(source)
    env = _env()
    for block in section.blocks:
        if block.lang == "python":
            script = tmp_path / f"block_{block.line}.py"
            script.write_text(block.text + "\n")
            done = subprocess.run(
                [sys.executable, script.name],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, (
                f"README line {block.line}: the python block failed\n{done.stderr[-3000:]}"
            )
        elif block.lang in ("sh", "bash"):
            for command in commands(block.text):
                assert command.startswith("fxstudio "), (
                    f"README line {block.line}: '{command}' is not an fxstudio command; put "
                    "set-up commands under a set-up section"
                )
                _link_repository_paths(command, tmp_path)
                done = subprocess.run(
                    ["bash", "-c", command],
                    cwd=tmp_path,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                assert done.returncode == expected_status(command), (
                    f"README line {block.line}: '{command}' exited {done.returncode}\n"
                    f"{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
                )


def _link_repository_paths(command: str, folder: Path) -> None:
    """A command that names a file of this repository (``tests/bench/synthetic.py:…``) runs
    as from a checkout: the path's first folder is linked into ``folder``."""
    for word in shlex.split(command, comments=True):
        path = word.split(":", 1)[0]
        top = path.split("/", 1)[0]
        if "/" in path and (ROOT / path).exists() and not (folder / top).exists():
            (folder / top).symlink_to(ROOT / top)


def test_readme_setup_commands_exist():
    """``make`` lines name real targets; the developer's commands name paths that exist."""
    for section in SECTIONS:
        if section.title not in SETUP_SECTIONS:
            continue
        for block in section.blocks:
            if block.lang not in ("sh", "bash"):
                continue
            for command in commands(block.text):
                words = shlex.split(command, comments=True)
                if words[0] == "make":
                    done = subprocess.run(
                        ["make", "-n", *words[1:]],
                        cwd=ROOT,
                        capture_output=True,
                        text=True,
                        env=dict(os.environ, MAKEFLAGS=""),
                    )
                    assert done.returncode == 0, (
                        f"README line {block.line}: '{command}': {done.stderr}"
                    )
                for word in words:
                    if "/" in word and not re.search(r"[*:=]|^-", word) and "://" not in word:
                        path = ROOT / word.lstrip("./") if word.startswith("./") else ROOT / word
                        assert path.exists() or word.startswith(("dist/", "./fxstudio-")), (
                            f"README line {block.line}: '{word}' does not exist"
                        )
