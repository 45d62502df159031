"""Builds the C search core; everything else is declared in pyproject.toml.

With gcc the core is built profile-guided (PGO), as CPython builds itself with
--enable-optimizations: first instrumented, then run on a fixed mix of puzzles
(solver/core/train.py, a few seconds), then built again with what that run
counted, which lays out its branches and inlines for the searches a service
makes (medians 2-15% lower at 4-12 moves: README, "Profile-guided build").  Another
compiler, RICOCHET_PGO=0, or any step that fails gives the plain build.
"""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

COMPILE_ARGS = ["-O3", "-std=c11", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-unused-parameter",
                "-Wno-missing-field-initializers", "-Wno-cast-function-type"]


class ProfileGuided(build_ext):
    """build_ext, twice with gcc: instrumented, trained, then optimised with the profile."""

    def build_extension(self, ext: Extension) -> None:
        if os.environ.get("RICOCHET_PGO", "1") == "0" or not self._gcc():
            return super().build_extension(ext)
        profile = os.path.abspath(os.path.join(self.build_temp, "pgo-profile"))
        shutil.rmtree(profile, ignore_errors=True)
        try:
            self._build(ext, [f"-fprofile-generate={profile}", "-fprofile-update=prefer-atomic"],
                        [f"-fprofile-generate={profile}"])
            train = os.path.join(os.path.dirname(os.path.abspath(__file__)), "solver", "core", "train.py")
            subprocess.run([sys.executable, train, self.get_ext_fullpath(ext.name)], check=True, timeout=600)
            self._build(ext, [f"-fprofile-use={profile}", "-fprofile-correction", "-Wno-missing-profile"], [])
        except Exception as e:  # noqa: BLE001 (the plain build rather than none)
            print(f"profile-guided build failed ({e}); building the core without it", file=sys.stderr)
            self._build(ext, [], [])

    def _build(self, ext: Extension, compile_args: list[str], link_args: list[str]) -> None:
        ext.extra_compile_args = COMPILE_ARGS + compile_args
        ext.extra_link_args = link_args
        self.force = True  # every object again: the flags changed, the sources did not
        super().build_extension(ext)

    def _gcc(self) -> bool:
        cc = (self.compiler.compiler_so or ["cc"])[0]
        try:
            out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return False
        return "Free Software Foundation" in out and "clang" not in out


setup(
    cmdclass={"build_ext": ProfileGuided},
    ext_modules=[
        Extension(
            "solver._core",
            # The search core, split by concern (solver/core/core.h holds the inline kernel).
            sources=[f"solver/core/{name}.c" for name in
                     ("module", "setup", "table", "ida", "astar", "crew", "relaxed", "reach", "facts", "retro")],
            depends=["solver/core/core.h", "solver/core/astar.h", "solver/core/retro.h", "solver/core/args.h"],
            # Functions shared between the files stay inside the extension.
            extra_compile_args=COMPILE_ARGS,
        )
    ],
)
