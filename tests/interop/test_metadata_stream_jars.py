"""The Kafka connector jars of the Spark pipeline: resolved with Maven into
``$KRAFT_CACHE`` once, checked against the pinned SHA-256 sums, a damaged copy replaced,
a jar that does not match its sum refused."""
from __future__ import annotations

import hashlib
import shutil

import pytest

from tools.metadata_stream import jars


@pytest.fixture
def real_jars():
    if shutil.which("mvn") is None:
        pytest.skip("mvn is not on PATH: the connector jars are resolved with Maven")
    return jars.ensure_jars()


def test_resolved_jars_match_the_pinned_sums(real_jars):
    assert [p.name for p in real_jars] == [jars.jar_name(a, v) for _, a, v, _ in jars.JARS]
    for path, (_, _, _, sha) in zip(real_jars, jars.JARS):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha


def test_a_damaged_cached_jar_is_resolved_again(real_jars, tmp_path, monkeypatch):
    monkeypatch.setenv("KRAFT_CACHE", str(tmp_path))
    home = jars.jars_dir()
    home.mkdir(parents=True)
    for path in real_jars:
        shutil.copy(path, home / path.name)
    damaged = home / real_jars[2].name
    data = bytearray(damaged.read_bytes())
    data[100] ^= 0xFF
    damaged.write_bytes(bytes(data))
    paths = jars.ensure_jars()
    assert [p.parent for p in paths] == [home] * len(jars.JARS)
    assert hashlib.sha256(damaged.read_bytes()).hexdigest() == jars.JARS[2][3]


def test_a_jar_not_matching_its_pinned_sum_is_refused(real_jars, tmp_path, monkeypatch):
    monkeypatch.setenv("KRAFT_CACHE", str(tmp_path))
    group, artifact, version, _ = jars.JARS[3]
    monkeypatch.setattr(jars, "JARS", jars.JARS[:3] + ((group, artifact, version, "0" * 64),))
    with pytest.raises(jars.JarsError, match="SHA-256"):
        jars.ensure_jars()
    assert not jars.jars_dir().exists()  # nothing half-done left behind
