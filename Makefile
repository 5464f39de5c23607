# fxstudio — every target sets up what it needs, on a fresh Debian/Ubuntu machine too.
#   make run    set up, then open the window on the built-in example
#   make test   set up, then run the whole test suite headless
#   make bench  set up, then run the benchmarks (JSON lines)
#   make package  build the Linux bundle (dist/fxstudio-*.tar.zst) and test the frozen app
#
# Variables:
#   PYTHON=python3.11        the interpreter the virtual environment is made from
#   TORCH_SPEC='torch==2.14.1 torchvision==0.29.1'  the torch/torchvision release pair installed
#                               when no torchvision is importable; for a chosen CUDA build e.g.
#                               TORCH_SPEC='torch torchvision --index-url https://download.pytorch.org/whl/cu126'
#   MODEL=examples:resnet    what `make run` opens

PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.14.1 torchvision==0.29.1
MODEL ?= examples:resnet
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages: graphviz (dot) and its headers for pygraphviz, a C toolchain and Python
# headers for packages that build from source, venv, Xvfb for a display-less `make run`, the
# X/EGL/font libraries Qt loads, imagemagick for screenshots of the whole screen, and chromium
# (the browser the report's tests and the viewers' bench drive through Playwright).
APT_PACKAGES := graphviz libgraphviz-dev pkg-config build-essential python3-dev python3-venv \
	xvfb xauth imagemagick chromium fonts-dejavu-core libegl1 libgl1 libglib2.0-0 libfontconfig1 \
	libdbus-1-3 libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 \
	libxcb-shape0 libxcb-randr0 libxcb-render-util0 libxcb-xinerama0 libxcb-image0 libxcb-xkb1 \
	libxrender1 libxi6

# What `make package` needs besides: the .desktop and AppStream validators, zstd.
PACKAGE_APT := desktop-file-utils appstream zstd

.PHONY: setup system run test bench bench-gpu package lint clean

setup: system $(VENV)/.installed

system:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml $(VENV)/bin/python
	@# torch and torchvision are one release pair: torchvision is built for one torch.
	$(PY) -c "import torch, torchvision" 2>/dev/null || $(PY) -m pip install -q $(TORCH_SPEC)
	$(PY) -m pip install -q -e '.[test,zoo,diffusion]'
	touch $@

run: setup
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		$(VENV)/bin/fxstudio $(MODEL); \
	else \
		echo "No display: rendering the window under Xvfb to fxstudio.png instead."; \
		xvfb-run -a -s "-screen 0 1600x1000x24" $(VENV)/bin/fxstudio $(MODEL) --screenshot fxstudio.png && \
		echo "Wrote fxstudio.png"; \
	fi

test: setup
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n auto --dist worksteal --durations=15

# The web viewers bench_viewers.py measures fxstudio against, in the system's chromium.
$(VENV)/.bench: pyproject.toml $(VENV)/.installed
	$(PY) -m pip install -q -e '.[bench]'
	touch $@

bench: setup $(VENV)/.bench
	$(PY) tests/bench/run.py

# On a machine with an NVIDIA GPU and a CUDA torch (with torchvision) in the venv.
bench-gpu: setup
	$(PY) tests/bench/bench_gpu.py

# The bundle ships the CPU torch: it is built in a venv of its own (PACKAGE_VENV, with
# PACKAGE_TORCH) so that the development venv keeps the torch/torchvision pair. The slow test
# starts the frozen app with no Python packages on the path.
PACKAGE_VENV ?= .venv-package
PACKAGE_TORCH ?= torch==2.13.0
PKG_PY := $(PACKAGE_VENV)/bin/python

package: system
	@missing=$$(for p in $(PACKAGE_APT); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	[ -x $(PKG_PY) ] || $(PYTHON) -m venv $(PACKAGE_VENV)
	$(PKG_PY) -c "import torch" 2>/dev/null || $(PKG_PY) -m pip install -q $(PACKAGE_TORCH)
	$(PKG_PY) -m pip install -q -e '.[package]' pytest pytest-qt pytest-timeout
	sh packaging/build.sh $(PKG_PY)
	QT_QPA_PLATFORM=offscreen $(PKG_PY) -m pytest -q -p no:cacheprovider -m bundle tests/test_bundle.py

lint: setup
	$(VENV)/bin/ruff check fxstudio tests
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) $(PACKAGE_VENV) build dist *.egg-info .pytest_cache
