"""The tests never write into the user's cache or config: fixtures of a module's scope run
before the per-test isolation (two of them opened reports into ~/.cache/tuiperf until
2026-12-05), so the session isolates first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tuiperf.load.cache.key import default_root


@pytest.fixture(scope="module")
def seen_by_a_module_fixture() -> tuple[str | None, str | None, Path]:
    env = os.environ.get("TUIPERF_CACHE_DIR"), os.environ.get("TUIPERF_CONFIG_DIR")
    return (*env, default_root())


def test_a_module_fixture_sees_the_private_cache(
    seen_by_a_module_fixture: tuple[str | None, str | None, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    cache, config, resolved = seen_by_a_module_fixture
    base = tmp_path_factory.getbasetemp()
    assert cache is not None and Path(cache).is_relative_to(base)
    assert config is not None and Path(config).is_relative_to(base)
    assert resolved.is_relative_to(base)
