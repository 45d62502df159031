"""Errors a caller can cause by handing the game model something invalid."""

from __future__ import annotations


class InvalidInput(ValueError):
    """Input that breaks the rules or the formats; `field` names where, in dotted form."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message

    def within(self, prefix: str) -> InvalidInput:
        """The same error, its field placed under `prefix` (e.g. 'puzzle')."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return InvalidInput(field, self.message)
