"""*Learn FX*: a guided lesson in checked steps (Qt-free; the window shows it).

- :mod:`.demos`  what the steps show, computed on the learner's own model: the trace order,
  the quiz, the stale-code bug, the placeholder API, the deliberate pattern miss, fx vs export
- :mod:`.steps`  the steps, the lesson state (saved in a session) and each step's check
"""
