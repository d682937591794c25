# The twins call methods that flexiq.Queue (which mixes this class in) defines.
# mypy: disable-error-code="attr-defined"
"""The ``a``-prefixed async twins of every blocking :class:`flexiq.Queue` call.

Each twin runs its blocking twin on flexiq's own thread pool (``run_blocking``), where the
engine releases the GIL, so the event loop never stalls on storage. Waits that may last
(``aresult``, ``astream``) are cut into short waits so a cancelled coroutine frees its thread
within about a second.
"""

from __future__ import annotations

import asyncio
import functools
import time
from concurrent.futures import ThreadPoolExecutor
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    TypeVar,
    Union,
)

from .exceptions import FlexiqTimeout
from .models import EffectiveRetention, Job, Page, Retention, RetentionPreview

if TYPE_CHECKING:
    from .result import JobResult

__all__ = ["AsyncMixin", "run_blocking"]

T = TypeVar("T")

#: Longest single blocking wait of ``aresult`` / ``astream`` (s).
_SLICE_S = 1.0

_executor: Optional[ThreadPoolExecutor] = None


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=64, thread_name_prefix="flexiq-async")
    return _executor


async def run_blocking(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Runs a blocking flexiq call on flexiq's thread pool and awaits it."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_pool(), functools.partial(fn, *args, **kwargs))


class AsyncMixin:
    """Async twins of the blocking calls (``aresult`` beside ``result``, ...)."""

    async def aresult(self, job_id: str, timeout: Optional[float] = None, poll: Optional[float] = None) -> Any:
        """Async twin of :meth:`result`: awaits a job's result (``timeout`` seconds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if timeout is not None and timeout <= 0:
            return await run_blocking(self.result, job_id, timeout, poll)
        while True:
            left = _SLICE_S if deadline is None else min(_SLICE_S, deadline - time.monotonic())
            if left <= 0:
                return await run_blocking(self.result, job_id, 0.001, poll)
            try:
                return await run_blocking(self.result, job_id, left, poll)
            except FlexiqTimeout:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    async def astream(
        self, job_id: str, timeout: Optional[float] = None, poll: Optional[float] = None
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`: async-iterates a job's partials (deserialized)."""
        it = await run_blocking(self._stream_native, job_id, timeout, poll)
        loads = self.serializer.loads
        done = object()
        while True:
            p = await run_blocking(next, it, done)
            if p is done:
                return
            yield loads(p["data"])

    async def aclose(self) -> None:
        """Async twin of :meth:`close`."""
        return await run_blocking(self.close)

    async def aenqueue(self, task_name: str, args: Sequence[Any] = (), kwargs: Optional[Dict[str, Any]] = None, *, queue: Optional[str] = None, priority: Optional[int] = None, delay: Optional[float] = None, eta: Any = None, max_retries: Optional[int] = None, retry_backoff: Optional[float] = None, timeout: Optional[float] = None, unique_key: Optional[str] = None, metadata: Union[Dict[str, Any], str, None] = None, depends_on: Optional[Sequence[Union[str, JobResult]]] = None, group_key: Optional[str] = None) -> JobResult:
        """Async twin of :meth:`enqueue`."""
        return await run_blocking(self.enqueue, task_name, args, kwargs, queue=queue, priority=priority, delay=delay, eta=eta, max_retries=max_retries, retry_backoff=retry_backoff, timeout=timeout, unique_key=unique_key, metadata=metadata, depends_on=depends_on, group_key=group_key)

    async def aenqueue_many(self, jobs: Iterable[Mapping[str, Any]]) -> List[JobResult]:
        """Async twin of :meth:`enqueue_many`."""
        return await run_blocking(self.enqueue_many, jobs)

    async def ashutdown(self, timeout: Optional[float] = None) -> None:
        """Async twin of :meth:`shutdown`."""
        return await run_blocking(self.shutdown, timeout)

    async def aget_job(self, job_id: str) -> Optional[Job]:
        """Async twin of :meth:`get_job`."""
        return await run_blocking(self.get_job, job_id)

    async def aget_result(self, job_id: str) -> Any:
        """Async twin of :meth:`get_result`."""
        return await run_blocking(self.get_result, job_id)

    async def arequest_cancel(self, job_id: str) -> bool:
        """Async twin of :meth:`request_cancel`."""
        return await run_blocking(self.request_cancel, job_id)

    async def ais_cancel_requested(self, job_id: str) -> bool:
        """Async twin of :meth:`is_cancel_requested`."""
        return await run_blocking(self.is_cancel_requested, job_id)

    async def acancel_job(self, job_id: str) -> bool:
        """Async twin of :meth:`cancel_job`."""
        return await run_blocking(self.cancel_job, job_id)

    async def alist_jobs(self, status: Optional[str] = None, queue: Optional[str] = None, task: Optional[str] = None, limit: int = 50, offset: int = 0) -> List[Job]:
        """Async twin of :meth:`list_jobs`."""
        return await run_blocking(self.list_jobs, status, queue, task, limit, offset)

    async def alist_jobs_filtered(self, status: Optional[str] = None, queue: Optional[str] = None, task: Optional[str] = None, metadata_contains: Optional[str] = None, error_contains: Optional[str] = None, created_after: Optional[int] = None, created_before: Optional[int] = None, limit: int = 50, offset: int = 0) -> List[Job]:
        """Async twin of :meth:`list_jobs_filtered`."""
        return await run_blocking(self.list_jobs_filtered, status, queue, task, metadata_contains, error_contains, created_after, created_before, limit, offset)

    async def alist_jobs_after(self, status: Optional[str] = None, queue: Optional[str] = None, task: Optional[str] = None, limit: int = 50, after: Optional[str] = None) -> Page[Job]:
        """Async twin of :meth:`list_jobs_after`."""
        return await run_blocking(self.list_jobs_after, status, queue, task, limit, after)

    async def alist_jobs_filtered_after(self, status: Optional[str] = None, queue: Optional[str] = None, task: Optional[str] = None, metadata_contains: Optional[str] = None, error_contains: Optional[str] = None, created_after: Optional[int] = None, created_before: Optional[int] = None, limit: int = 50, after: Optional[str] = None) -> Page[Job]:
        """Async twin of :meth:`list_jobs_filtered_after`."""
        return await run_blocking(self.list_jobs_filtered_after, status, queue, task, metadata_contains, error_contains, created_after, created_before, limit, after)

    async def aget_job_errors(self, job_id: str) -> List[Dict[str, Any]]:
        """Async twin of :meth:`get_job_errors`."""
        return await run_blocking(self.get_job_errors, job_id)

    async def areplay(self, job_id: str) -> str:
        """Async twin of :meth:`replay`."""
        return await run_blocking(self.replay, job_id)

    async def areplay_history(self, job_id: str) -> List[Dict[str, Any]]:
        """Async twin of :meth:`replay_history`."""
        return await run_blocking(self.replay_history, job_id)

    async def ajob_dag(self, job_id: str) -> Dict[str, List[Dict[str, str]]]:
        """Async twin of :meth:`job_dag`."""
        return await run_blocking(self.job_dag, job_id)

    async def ajob_logs(self, job_id: str) -> List[Dict[str, Any]]:
        """Async twin of :meth:`job_logs`."""
        return await run_blocking(self.job_logs, job_id)

    async def alist_archived(self, limit: int = 50, offset: int = 0) -> List[Job]:
        """Async twin of :meth:`list_archived`."""
        return await run_blocking(self.list_archived, limit, offset)

    async def alist_archived_after(self, limit: int = 50, after: Optional[str] = None) -> Page[Job]:
        """Async twin of :meth:`list_archived_after`."""
        return await run_blocking(self.list_archived_after, limit, after)

    async def aset_queue_rate_limit(self, queue_name: str, rate_limit: str) -> None:
        """Async twin of :meth:`set_queue_rate_limit`."""
        return await run_blocking(self.set_queue_rate_limit, queue_name, rate_limit)

    async def aclear_queue_rate_limit(self, queue_name: str) -> None:
        """Async twin of :meth:`clear_queue_rate_limit`."""
        return await run_blocking(self.clear_queue_rate_limit, queue_name)

    async def aset_queue_concurrency(self, queue_name: str, max_concurrent: int) -> None:
        """Async twin of :meth:`set_queue_concurrency`."""
        return await run_blocking(self.set_queue_concurrency, queue_name, max_concurrent)

    async def aclear_queue_concurrency(self, queue_name: str) -> None:
        """Async twin of :meth:`clear_queue_concurrency`."""
        return await run_blocking(self.clear_queue_concurrency, queue_name)

    async def apause(self, queue_name: str) -> None:
        """Async twin of :meth:`pause`."""
        return await run_blocking(self.pause, queue_name)

    async def aresume(self, queue_name: str) -> None:
        """Async twin of :meth:`resume`."""
        return await run_blocking(self.resume, queue_name)

    async def apaused_queues(self) -> List[str]:
        """Async twin of :meth:`paused_queues`."""
        return await run_blocking(self.paused_queues)

    async def apurge(self, queue_name: str) -> int:
        """Async twin of :meth:`purge`."""
        return await run_blocking(self.purge, queue_name)

    async def arevoke_task(self, task_name: str) -> None:
        """Async twin of :meth:`revoke_task`."""
        return await run_blocking(self.revoke_task, task_name)

    async def aunrevoke_task(self, task_name: str) -> bool:
        """Async twin of :meth:`unrevoke_task`."""
        return await run_blocking(self.unrevoke_task, task_name)

    async def arevoked_tasks(self) -> List[str]:
        """Async twin of :meth:`revoked_tasks`."""
        return await run_blocking(self.revoked_tasks)

    async def aqueue_config(self, queue_name: str) -> Dict[str, Any]:
        """Async twin of :meth:`queue_config`."""
        return await run_blocking(self.queue_config, queue_name)

    async def astats(self) -> Dict[str, int]:
        """Async twin of :meth:`stats`."""
        return await run_blocking(self.stats)

    async def astats_by_queue(self) -> Dict[str, Dict[str, int]]:
        """Async twin of :meth:`stats_by_queue`."""
        return await run_blocking(self.stats_by_queue)

    async def astats_all_queues(self) -> Dict[str, Dict[str, int]]:
        """Async twin of :meth:`stats_all_queues`."""
        return await run_blocking(self.stats_all_queues)

    async def astats_for_queue(self, queue_name: str) -> Dict[str, int]:
        """Async twin of :meth:`stats_for_queue`."""
        return await run_blocking(self.stats_for_queue, queue_name)

    async def ametrics(self, task_name: Optional[str] = None, since: int = 3600) -> Dict[str, Dict[str, Any]]:
        """Async twin of :meth:`metrics`."""
        return await run_blocking(self.metrics, task_name, since)

    async def ametrics_timeseries(self, task_name: Optional[str] = None, since: int = 3600, bucket: int = 60) -> List[Dict[str, Any]]:
        """Async twin of :meth:`metrics_timeseries`."""
        return await run_blocking(self.metrics_timeseries, task_name, since, bucket)

    async def aget_metrics(self, since_ms: int, task_name: Optional[str] = None) -> List[Dict[str, Any]]:
        """Async twin of :meth:`get_metrics`."""
        return await run_blocking(self.get_metrics, since_ms, task_name)

    async def acount_pending_by_queue(self, queue_name: str) -> int:
        """Async twin of :meth:`count_pending_by_queue`."""
        return await run_blocking(self.count_pending_by_queue, queue_name)

    async def alist_workers(self) -> List[Dict[str, Any]]:
        """Async twin of :meth:`list_workers`."""
        return await run_blocking(self.list_workers)

    async def adead_letters(self, limit: int = 10, offset: int = 0) -> List[Dict[str, Any]]:
        """Async twin of :meth:`dead_letters`."""
        return await run_blocking(self.dead_letters, limit, offset)

    async def adead_letters_by_task(self, task_name: str, limit: int = 10, offset: int = 0) -> List[Dict[str, Any]]:
        """Async twin of :meth:`dead_letters_by_task`."""
        return await run_blocking(self.dead_letters_by_task, task_name, limit, offset)

    async def adead_letters_after(self, limit: int = 10, after: Optional[str] = None) -> Page[Dict[str, Any]]:
        """Async twin of :meth:`dead_letters_after`."""
        return await run_blocking(self.dead_letters_after, limit, after)

    async def aretry_dead(self, dead_id: str) -> str:
        """Async twin of :meth:`retry_dead`."""
        return await run_blocking(self.retry_dead, dead_id)

    async def apurge_dead(self, older_than: int = 86400) -> int:
        """Async twin of :meth:`purge_dead`."""
        return await run_blocking(self.purge_dead, older_than)

    async def adelete_dead(self, dead_id: str) -> bool:
        """Async twin of :meth:`delete_dead`."""
        return await run_blocking(self.delete_dead, dead_id)

    async def apurge_dead_by_task(self, task_name: str) -> int:
        """Async twin of :meth:`purge_dead_by_task`."""
        return await run_blocking(self.purge_dead_by_task, task_name)

    async def arequeue_job(self, job_id: str) -> bool:
        """Async twin of :meth:`requeue_job`."""
        return await run_blocking(self.requeue_job, job_id)

    async def apurge_completed(self, older_than: int = 86400) -> int:
        """Async twin of :meth:`purge_completed`."""
        return await run_blocking(self.purge_completed, older_than)

    async def aeffective_retention(self) -> Optional[EffectiveRetention]:
        """Async twin of :meth:`effective_retention`."""
        return await run_blocking(self.effective_retention)

    async def adry_run_retention(self, retention: Union[Retention, Dict[str, Optional[int]], None] = None) -> RetentionPreview:
        """Async twin of :meth:`dry_run_retention`."""
        return await run_blocking(self.dry_run_retention, retention)

    async def aget_setting(self, key: str) -> Optional[str]:
        """Async twin of :meth:`get_setting`."""
        return await run_blocking(self.get_setting, key)

    async def aset_setting(self, key: str, value: str) -> None:
        """Async twin of :meth:`set_setting`."""
        return await run_blocking(self.set_setting, key, value)

    async def adelete_setting(self, key: str) -> bool:
        """Async twin of :meth:`delete_setting`."""
        return await run_blocking(self.delete_setting, key)

    async def alist_settings(self) -> Dict[str, str]:
        """Async twin of :meth:`list_settings`."""
        return await run_blocking(self.list_settings)

    async def aset_setting_if(self, key: str, expected: Optional[str], value: str) -> bool:
        """Async twin of :meth:`set_setting_if`."""
        return await run_blocking(self.set_setting_if, key, expected, value)

    async def amigrate(self) -> Dict[str, Any]:
        """Async twin of :meth:`migrate`."""
        return await run_blocking(self.migrate)

    async def amin_contract(self) -> int:
        """Async twin of :meth:`min_contract`."""
        return await run_blocking(self.min_contract)

    async def aset_min_contract(self, level: int) -> None:
        """Async twin of :meth:`set_min_contract`."""
        return await run_blocking(self.set_min_contract, level)

    apause_queue = apause
    aresume_queue = aresume
    alist_paused_queues = apaused_queues
    apurge_queue = apurge
    areplay_job = areplay
    aget_replay_history = areplay_history
