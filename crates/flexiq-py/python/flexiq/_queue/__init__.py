"""The parts of :class:`flexiq.Queue`, one module per area, named as the engine's are
(``flexiq-runtime``'s ``queue/`` and the native ``src/queue/``): ``jobs``, ``listing``,
``control``, ``dead``, ``stats``, ``admin``, ``clean``, ``reschedule``, ``flows``, ``dedup``,
``schedulers``, ``events``, ``wait`` and ``workflow``, over the handle in ``base``.

Each module is a mixin of blocking methods; ``flexiq.queue`` composes them into ``Queue``,
``forward`` gives it every native call that needs no conversion as it is, and
:func:`flexiq._aio.async_twins` gives every one its ``a``-prefixed twin. ``workflow`` also holds
the class of the workflow view that ``Queue.workflow_jobs`` returns, with twins of its own. This package imports
nothing itself, so importing one part never imports another.
"""
