"""The one check the Java-backed tests share: skip, saying why, when no JDK is present."""
from __future__ import annotations

import os
import shutil

import pytest


def need_jdk() -> None:
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no JDK: java is not on PATH and JAVA_HOME is unset")
