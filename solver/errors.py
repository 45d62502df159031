"""Errors a caller can cause by handing the game model something invalid."""

from __future__ import annotations


class InvalidInput(ValueError):
    """Input that breaks the rules or the formats; `field` names where, in dotted form."""

    def __init__(self, field: str, message: str, others: list[tuple[str, str]] | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
        self.others = others or []  # further (field, message) problems found in the same input

    def problems(self) -> list[dict[str, str]]:
        return [{"field": f, "message": m} for f, m in [(self.field, self.message), *self.others]]

    def within(self, prefix: str) -> InvalidInput:
        """The same error, its field placed under `prefix` (e.g. 'puzzle')."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return InvalidInput(field, self.message)
