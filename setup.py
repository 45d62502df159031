"""Builds the C search core; everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "solver._core",
            # The search core, split by concern (solver/core/core.h holds the inline kernel).
            sources=[f"solver/core/{name}.c" for name in
                     ("module", "setup", "table", "ida", "astar", "crew", "reach", "facts", "retro")],
            depends=["solver/core/core.h", "solver/core/astar.h", "solver/core/retro.h"],
            # Functions shared between the files stay inside the extension.
            extra_compile_args=["-O3", "-std=c11", "-fvisibility=hidden", "-Wall", "-Wextra",
                                "-Wno-unused-parameter",
                                "-Wno-missing-field-initializers", "-Wno-cast-function-type"],
        )
    ],
)
