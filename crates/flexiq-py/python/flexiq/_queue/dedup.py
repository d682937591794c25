"""Deduplicated enqueues on :class:`flexiq.Queue`, as ``flexiq-runtime``'s ``queue/dedup.rs``.

The ``dedup`` enqueue option (a :class:`~flexiq._options.DedupOptions` dict, accepted by
``enqueue``, ``enqueue_many``, ``apply_async`` and :meth:`DedupMixin.enqueue_outcome`) keeps
a key per namespace naming the job that holds it; its mode decides what an enqueue does while
the key is held (see docs/python.md). ``enqueue`` returns the holder's handle either way;
:meth:`DedupMixin.enqueue_outcome` also says whether a job was inserted. The key's record can
be read (:meth:`DedupMixin.dedup_job_id`) and deleted (:meth:`DedupMixin.delete_dedup_key`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence

from .._options import EnqueueOptions, check_option_names, native_options
from ..exceptions import InvalidArgument
from ..models import EnqueueOutcome
from ..task import call_args
from .base import QueueBase

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DedupMixin"]


class DedupMixin(QueueBase):
    """Enqueue with an outcome, read and delete dedup keys."""

    def enqueue_outcome(
        self,
        task_name: str,
        args: Sequence[Any] = (),
        kwargs: Optional[Dict[str, Any]] = None,
        **options: Unpack[EnqueueOptions],
    ) -> EnqueueOutcome:
        """Enqueues like :meth:`enqueue` (the same arguments and options) and says what
        happened: ``deduplicated`` is true when a unique key or the ``dedup`` key returned an
        existing job, whose id ``id`` then is."""
        check_option_names("enqueue_outcome", options)
        if not isinstance(task_name, str):
            raise InvalidArgument(f"task_name must be a string, not {type(task_name).__name__}")
        payload = self.serializer.dumps_call(*call_args(args, kwargs))
        job_id, created = self._native.enqueue_outcome(task_name, payload, native_options(options))
        return EnqueueOutcome(id=job_id, deduplicated=not created)

    def dedup_job_id(self, key: str) -> Optional[str]:
        """The id of the job holding dedup key ``key`` now; ``None`` when the key is free."""
        return self._native.dedup_job_id(key)

    def delete_dedup_key(self, key: str) -> bool:
        """Deletes dedup key ``key``, so the next enqueue with it inserts; the holding job is
        left alone. True when the key existed."""
        return self._native.delete_dedup_key(key)
