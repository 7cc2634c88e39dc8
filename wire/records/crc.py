"""CRC-32C (Castagnoli), the checksum of record batches, from the ``crc32c`` package's C
extension.

The extension is loaded by itself: the package's ``__init__`` asks ``importlib.metadata`` for
its own version, which costs a node ~30 ms of start-up for nothing. If the package's layout
ever changes, the ordinary import is used instead.
"""
from __future__ import annotations


def _load():
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader
    from importlib.util import find_spec, module_from_spec, spec_from_loader
    from pathlib import Path

    try:
        package = find_spec("crc32c")  # locates the package without running its __init__
        for folder in package.submodule_search_locations or ():
            for suffix in EXTENSION_SUFFIXES:
                path = Path(folder, "_crc32c" + suffix)
                if path.is_file():
                    loader = ExtensionFileLoader("crc32c._crc32c", str(path))
                    module = module_from_spec(spec_from_loader("crc32c._crc32c", loader))
                    loader.exec_module(module)
                    return module.crc32c
    except (ImportError, AttributeError, OSError):
        pass
    import crc32c as package_module
    return package_module.crc32c


crc32c = _load()
