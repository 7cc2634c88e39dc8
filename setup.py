"""Builds the optional compiled codecs; everything else is in setup.cfg.

The modules in ``wire/native.py``'s ``COMPILED`` list are compiled from their own
``.py`` source by Cython (pure-Python mode: the ``.py`` stays the only source; a
``.pxd`` beside it, written by codegen for the generated messages and by hand for
``wire/records/values.py``, gives them C types) when Cython and a C
compiler are available. Without them, or with ``KRAFT_PURE_PYTHON=1``, nothing is built
and the package runs as pure Python; a module that fails to compile is skipped.
"""
import ast
import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext


ROOT = Path(__file__).resolve().parent


def compiled_modules() -> list[str]:
    """``COMPILED`` from wire/native.py, read without importing the package."""
    tree = ast.parse((ROOT / "wire" / "native.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "COMPILED":
            return list(ast.literal_eval(node.value))
    raise RuntimeError("wire/native.py has no COMPILED list")


# the hot loops of the leader's batches and the loader's replay: optimised further
HOT = {"wire.records.values"}


def extensions() -> list:
    if os.environ.get("KRAFT_PURE_PYTHON", "") not in ("", "0"):
        print("kraft-server: KRAFT_PURE_PYTHON is set, building no compiled codecs", file=sys.stderr)
        return []
    if not (shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")):
        print("kraft-server: no C compiler, the codecs stay pure Python", file=sys.stderr)
        return []
    try:
        from Cython.Build import cythonize
        from setuptools import Extension
    except ImportError:
        print("kraft-server: Cython is not installed, the codecs stay pure Python", file=sys.stderr)
        return []
    exts = [Extension(name, [name.replace(".", "/") + ".py"], optional=True,
                      extra_compile_args=["-O2" if name in HOT else "-O1", "-g0"])
            for name in compiled_modules()]
    # annotation_typing off: annotations stay documentation, so the compiled module accepts
    # exactly what the .py accepts (a bytearray subclass, a memoryview for ``bytes``...).
    return cythonize(exts, nthreads=os.cpu_count() or 1, quiet=True,
                     compiler_directives={"language_level": 3, "annotation_typing": False,
                                          "binding": True, "embedsignature": False,
                                          # `if cython.compiled:` leaves the pure branch unreachable
                                          "warn.unreachable": False})


class BuildExt(build_ext):
    """Compiles the C files in parallel, one per core (a fresh build takes minutes)."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        self._failed = set()
        super().build_extensions()
        # what did not compile is neither copied nor installed: those modules stay pure Python
        self.extensions = [e for e in self.extensions if e.name not in self._failed]

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # no working compiler
            self._failed.add(ext.name)
            print(f"kraft-server: {ext.name} not compiled ({exc}); it stays pure Python", file=sys.stderr)


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
