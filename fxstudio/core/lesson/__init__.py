"""*Learn FX*: a guided lesson in checked steps (Qt-free; the window shows it).

- :mod:`.demos`  what the steps show, computed on the learner's own model: the trace order,
  the quiz, the stale-code bug, the placeholder API, the deliberate pattern miss, fx vs export
- :mod:`.state`  the lesson's state and verdicts (saved in a session), and the models it uses
- :mod:`.checks` what steps 1-7 say and check, as plain functions of (document, state)
- :mod:`.beyond` the same for steps 8-10: the traps, a real pass measured, torch.export
- :mod:`.syllabus`  the steps in order, each with its check
"""
