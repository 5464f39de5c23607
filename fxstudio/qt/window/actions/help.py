"""The Help menu: the guided lesson, the keyboard shortcuts, About."""

from __future__ import annotations

from fxstudio.core.flows.lesson import STEPS, count_word
from fxstudio.qt.window.actions.action import SK, Action, Entries

MENU = "&Help"

ENTRIES: Entries = (
    Action(
        id="actionLearnFx",
        text="&Learn FX",
        menu=MENU,
        run=lambda w: w.learn(),
        tip=f"A guided lesson in {count_word(len(STEPS))} checked steps, on this window",
    ),
    Action(
        id="actionHelp",
        text="&Keyboard shortcuts",
        menu=MENU,
        run=lambda w: w.show_shortcuts(),
        keys=SK.HelpContents,
    ),
    Action(id="actionAbout", text="&About fxstudio", menu=MENU, run=lambda w: w.show_about()),
)
