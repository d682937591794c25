"""Retention read-back and preview, deployment settings, schema and the contract floor of
:class:`flexiq.Queue`, as ``flexiq-runtime``'s ``queue/admin.rs``. Retention windows go in
as seconds and come back in milliseconds, as the spec says."""

from __future__ import annotations

from typing import Any, Dict, Optional, Union

from ..exceptions import InvalidArgument
from ..models import EffectiveRetention, Retention, RetentionPreview
from .base import QueueBase

__all__ = ["AdminMixin", "retention_dict"]


def retention_dict(retention: Union[Retention, Dict[str, Optional[int]], None]) -> Optional[Dict[str, Optional[int]]]:
    """Retention windows (seconds) as the native dict keyed by table."""
    if retention is None:
        return None
    if isinstance(retention, Retention):
        return retention.to_dict()
    if isinstance(retention, dict):
        return dict(retention)
    raise InvalidArgument(f"retention must be a Retention or a dict of seconds per table, not {type(retention).__name__}")


class AdminMixin(QueueBase):
    """Retention, settings, schema and the contract floor."""

    def effective_retention(self) -> Optional[EffectiveRetention]:
        """The windows (ms) the elected cleaner applied on its last sweep; ``None`` before
        any worker has swept."""
        d = self._native.effective_retention()
        return None if d is None else EffectiveRetention(**d)

    def dry_run_retention(
        self, retention: Union[Retention, Dict[str, Optional[int]], None] = None
    ) -> RetentionPreview:
        """Counts what a purge would delete now, deleting nothing. ``retention`` (seconds)
        defaults to this queue's configured windows, else the recommended ones."""
        return RetentionPreview(**self._native.dry_run_retention(retention_dict(retention)))

    def get_setting(self, key: str) -> Optional[str]:
        """A setting's value; ``None`` for a key never set."""
        return self._native.get_setting(key)

    def set_setting(self, key: str, value: str) -> None:
        """Writes a setting (last write wins)."""
        self._native.set_setting(key, value)

    def delete_setting(self, key: str) -> bool:
        """Deletes a setting; False when it did not exist."""
        return self._native.delete_setting(key)

    def list_settings(self) -> Dict[str, str]:
        """Every setting, runtime-owned keys included."""
        return self._native.list_settings()

    def set_setting_if(self, key: str, expected: Optional[str], value: str) -> bool:
        """Compare-and-set: writes only while ``key`` holds ``expected`` (``None``: unset)."""
        return self._native.set_setting_if(key, expected, value)

    def migrate(self) -> Dict[str, Any]:
        """Applies pending schema changes: ``applied`` and ``workflow_applied`` version lists,
        ``archived_jobs`` and ``schemaless``."""
        return self._native.migrate()

    def min_contract(self) -> int:
        """The lowest contract level a process may speak and still open this storage."""
        return self._native.min_contract()

    def set_min_contract(self, level: int) -> None:
        """Moves the contract floor; a level this build does not speak is refused."""
        self._native.set_min_contract(level)
