"""Sessions: a document opened (a model, or a session file with its edits replayed on it),
and the session file itself.

- :mod:`~fxstudio.core.sessions.documents`: :func:`open_document`, :func:`open_session`
- :mod:`~fxstudio.core.sessions.replay`: the edits of a session, done again
- :mod:`~fxstudio.core.sessions.sessionfile`: the ``.fxstudio`` session file, written and read

It sits above :mod:`~fxstudio.core.patterns` (a replayed rewrite finds its pattern again)
and below the flows.
"""
