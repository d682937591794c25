"""The parts of :class:`flexiq.Queue`, one module per area, named as the engine's are
(``flexiq-runtime``'s ``queue/`` and the native ``src/queue/``): ``jobs``, ``listing``,
``control``, ``dead``, ``stats``, ``admin`` and ``wait``, over the handle in ``base``.

Each module is a mixin of blocking methods; ``flexiq.queue`` composes them into ``Queue`` and
:func:`flexiq._aio.async_twins` gives every one its ``a``-prefixed twin. This package imports
nothing itself, so importing one part never imports another.
"""
