"""*Learn FX*: a guided lesson in checked steps (Qt-free; the window shows it).

- :mod:`.demos`  what the steps show, computed on the learner's own model: the trace order,
  the quiz, the stale-code bug, the placeholder API, the deliberate pattern miss, fx vs export
- :mod:`.state`  the lesson's state and verdicts (saved in a session), and the models it uses
- :mod:`.checks` what each step says and checks, as plain functions of (document, state)
- :mod:`.steps`  the steps in order, each with its check
"""
