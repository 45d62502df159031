"""The search: the optimal solver over the C core (solver/core/, built as
solver._core), the plain reference search the tests hold it to, and the
solutions it returns (hints, the robots they move)."""
