"""Settings: get / set / delete / list and compare-and-set."""

from __future__ import annotations

import pytest

import flexiq
from flexiq import InvalidArgument, Queue


def test_settings_round_trip(queue: Queue) -> None:
    assert queue.get_setting("theme") is None
    assert queue.delete_setting("theme") is False
    queue.set_setting("theme", "dark")
    queue.set_setting("theme", "light")
    assert queue.get_setting("theme") == "light"
    assert queue.list_settings()["theme"] == "light"
    assert queue.delete_setting("theme") is True
    assert "theme" not in queue.list_settings()


def test_set_setting_if(queue: Queue) -> None:
    assert queue.set_setting_if("k", None, "1") is True
    assert queue.set_setting_if("k", None, "2") is False
    assert queue.set_setting_if("k", "0", "2") is False
    assert queue.set_setting_if("k", "1", "2") is True
    assert queue.get_setting("k") == "2"


def test_bad_keys_and_reserved_prefixes(queue: Queue) -> None:
    with pytest.raises(InvalidArgument):
        queue.set_setting("", "x")
    with pytest.raises(InvalidArgument):
        queue.set_setting("k" * 2000, "x")
    with pytest.raises(TypeError):
        queue.set_setting("k", 5)  # type: ignore[arg-type]


#: The prefixes the spec says belong to the runtime.
SPEC_RESERVED = ["auth:", "contract:", "middleware:disabled:", "quota:", "retention:", "webhook:", "webhooks:", "flexiq.webhooks"]


def test_reserved_prefixes_are_the_specs_and_are_not_filtered(queue: Queue) -> None:
    prefixes = flexiq.reserved_setting_prefixes()
    assert sorted(prefixes) == sorted(SPEC_RESERVED) and len(prefixes) == len(set(prefixes))
    # The settings methods do no filtering: every reserved key can be written and read back.
    for p in SPEC_RESERVED:
        key = f"{p}pytest-probe"
        queue.set_setting(key, p)
        assert queue.get_setting(key) == p
        assert queue.list_settings()[key] == p
        assert queue.set_setting_if(key, p, "2") is True
        assert queue.delete_setting(key) is True
        assert queue.get_setting(key) is None
