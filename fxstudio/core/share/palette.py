"""The canvas's look, as plain values and helpers the SVG drawing can use without Qt: the
light theme's colours (equal to ``fxstudio.qt.theme.LIGHT``'s: a test holds them together),
the fonts the canvas writes a node's lines in, and those fonts' advances per character as the
window measures them (DejaVu Sans at 96 dpi, the canvas's default), so that boxes laid out for
the SVG fit their text as on the canvas; text cut to a width (:func:`elide`), the heat's
colours (:func:`heat_colour`).

Example:
    >>> METRICS.width("relu", bold=True) > METRICS.width("relu")
    True
    >>> LIGHT["fills"]["call_module"]
    '#fce7f3'
"""

from __future__ import annotations

from typing import Any

from fxstudio.core.layout.labels import TextMetrics

__all__ = [
    "DETAIL_PX",
    "FONT_FAMILY",
    "LIGHT",
    "METRICS",
    "NAME_PX",
    "STUB_PX",
    "darker",
    "elide",
    "heat_colour",
    "hex_rgb",
    "ink_on",
    "px",
]

#: The canvas's colours (the light theme), by the names of ``fxstudio.qt.theme.Colors``.
LIGHT: dict[str, Any] = {
    "canvas": "#fafafa",
    "fills": {
        "placeholder": "#d1fae5",
        "get_attr": "#fef3c7",
        "call_function": "#dbeafe",
        "call_method": "#e0e7ff",
        "call_module": "#fce7f3",
        "output": "#e5e7eb",
    },
    "borders": {
        "placeholder": "#059669",
        "get_attr": "#d97706",
        "call_function": "#2563eb",
        "call_method": "#4f46e5",
        "call_module": "#db2777",
        "output": "#4b5563",
    },
    "fill": "#f3f4f6",
    "border": "#6b7280",
    "text": "#111827",
    "subtext": "#374151",
    "faint": "#6b7280",
    "port": "#ffffff",
    "edge": "#6b7280",
    "selected": "#f59e0b",
    "problem": "#dc2626",
    "group_fill": "#ede9fe",
    "group_border": "#7c3aed",
    "group_text": "#4c1d95",
    "frame": "#a78bfa",
    "frame_fill": (245, 243, 255, 120),
    "frame_text": "#6d28d9",
    "stub_fill": "#f9fafb",
    "stub_border": "#9ca3af",
    "stub_text": "#374151",
}

#: The fonts' family, as an SVG reader is asked for it (the first it has).
FONT_FAMILY = "DejaVu Sans, Verdana, Arial, sans-serif"


def px(points: float) -> float:
    """A font's size in points as pixels at 96 dpi (the canvas's scene unit)."""
    return round(points * 96 / 72, 2)


#: A node's name (bold), its target and shape lines, a stub's name (italic): as the canvas.
NAME_PX, DETAIL_PX, STUB_PX = px(8.5), px(7.5), px(7.0)

#: The characters measured, and their advances in 1/64 px: the canvas's bold 8.5 pt and
#: plain 7.5 pt DejaVu Sans (``fxstudio.qt.canvas.items.text_metrics`` on a 96 dpi screen).
MEASURED = "".join(map(chr, range(32, 127))) + "…×→▸▾·"


def _advances(text: str) -> tuple[int, ...]:
    return tuple(int(a) for a in text.split())


_BOLD_64 = _advances(
    """
    245 321 366 589 489 705 613 215 321 321 368 589 267 292 267 257 489 489 489 489 489 489
    489 489 489 489 281 281 589 589 589 408 704 544 536 516 584 480 480 577 589 261 261 545
    448 700 589 598 515 598 542 507 480 571 544 776 542 509 510 321 257 321 589 352 352 475
    503 417 503 477 306 503 501 241 241 468 241 733 501 483 503 503 347 419 336 501 458 650
    454 458 409 501 257 501 589 704 589 589 353 353 267
    """
)
_PLAIN_64 = _advances(
    """
    203 256 294 536 407 608 499 175 249 249 320 536 203 230 203 215 407 407 407 407 407 407
    407 407 407 407 215 215 536 536 536 339 640 437 439 446 492 404 368 495 481 188 188 419
    356 552 478 503 385 503 444 406 390 468 437 632 438 390 438 249 215 249 536 320 320 392
    406 351 406 393 225 406 405 177 177 370 177 623 405 391 406 406 263 333 250 405 378 523
    378 378 335 407 215 407 536 640 536 536 321 321 203
    """
)
_OTHER_64 = (776, 640)  # any other character: the widest measured


def _table(advances: tuple[int, ...], other: int) -> dict[str, float]:
    table = {c: a / 64 for c, a in zip(MEASURED, advances, strict=True)}
    table[""] = other / 64
    return table


#: The canvas's fonts measured (what the window's layout sizes boxes with).
METRICS = TextMetrics(_table(_BOLD_64, _OTHER_64[0]), _table(_PLAIN_64, _OTHER_64[1]))


# --- the look's helpers ------------------------------------------------------------------

COOL, HOT = (0xFF, 0xF3, 0xB0), (0xD7, 0x19, 0x1C)  # the canvas's heat: pale yellow -> red


def elide(text: str, width: float, bold: bool = False, middle: bool = True) -> str:
    """``text`` as it fits ``width`` in the canvas's font: whole, or cut with "…" (in the
    middle, as node lines; at the right, as frame titles)."""
    measure = METRICS.width
    if measure(text, bold) <= width:
        return text
    if not middle:
        while text and measure(text + "…", bold) > width:
            text = text[:-1]
        return text + "…"
    head, tail = text[: (len(text) + 1) // 2], text[(len(text) + 1) // 2 :]
    while (head or tail) and measure(head + "…" + tail, bold) > width:
        if len(head) >= len(tail):
            head = head[:-1]
        else:
            tail = tail[1:]
    return head + "…" + tail


def heat_colour(level: float) -> tuple[int, int, int]:
    """0 -> pale yellow, 1 -> red (the canvas's heat overlay)."""
    t = max(0.0, min(1.0, level))
    return tuple(int(a + (b - a) * t) for a, b in zip(COOL, HOT, strict=True))  # type: ignore[return-value]


def hex_rgb(rgb: tuple[int, ...]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def darker(rgb: tuple[int, int, int], factor: float) -> tuple[int, int, int]:
    """As ``QColor.darker(factor * 100)``: the value divided, hue and saturation kept."""
    return tuple(int(c / factor) for c in rgb)  # type: ignore[return-value]


def ink_on(rgb: tuple[int, int, int]) -> str:
    luma = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]
    return "#111111" if luma > 140 else "#ffffff"
