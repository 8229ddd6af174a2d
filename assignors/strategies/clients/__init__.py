"""Strategies as a client library's group leader runs them (`range@kafka-python`).

A classic group's assignment is computed by its leader, a member, with its own client
library's assignor. Where a library's assignor differs from Java's, a variant here reproduces
that library's result, failures included: a leader whose assignor raises or never returns
gives the group no assignment, which `ClientAssignorFailure` reports (the planner turns it into
a `CLIENT_ASSIGNOR_FAILED` warning naming the library and what happens to the group).
"""

from __future__ import annotations


class ClientAssignorFailure(Exception):
    """A client library's assignor fails on this group: `library`, and what the group sees."""

    def __init__(self, library: str, strategy: str, what: str) -> None:
        super().__init__(f"{library}'s {strategy} assignor {what}")
        self.library = library
        self.strategy = strategy
        self.what = what
