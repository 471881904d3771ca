"""The class board: one word, a room of students, every use of it on the projector.

A teacher makes a board for one word ("bank"), optionally with two to four sense names
("money", "river"). Students join with a short code and send sentences that use the word,
each with the sense they mean; the projector draws every use the models read.

- ``rules``: what a board accepts, with no database: limits, join codes, the teacher's key,
  the word-use rule, sentence and sense cleaning, the CSV export.
- ``store``: the boards and their sentences in a database (SQLite on one server,
  PostgreSQL when several servers share a room), with the limits enforced in one
  transaction per submission.
- ``analysis``: the sentences' vectors, their projections and how well senses separate.

Importing this package imports neither submodule: ``store`` pulls in SQLAlchemy and
``analysis`` the models, and each page imports only what it uses.
"""
