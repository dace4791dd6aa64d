"""Text understanding, with no database: what a conversation and a memory's text say.

* :mod:`.promotion` — a finished session's turns compiled into candidate memories (turn
  window, fingerprint, prompt, fail-closed parser, the offline heuristic compiler);
* :mod:`.changes` — a memory's text read into claims, and whether two claims state different
  values of one attribute.

``apps.memory`` runs both against its rows: ``services.promotion`` writes the candidates and
``services.changes`` retires the memories a newer claim changes.
"""
