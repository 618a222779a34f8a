"""Single-cell generative models on AnnData (MMSFM first; Inverse Flow and GIM to follow)."""

from scigen.singlecell._version import __version__

__all__ = ["SYSTEMS", "__version__"]

SYSTEMS = {"mmsfm": "scigen.singlecell.mmsfm.system:MMSFM"}
SYSTEMS["inverseflow"] = "scigen.singlecell.inverseflow.system:InverseFlow"

#: extra CLI verbs per system, registered without importing the system class (fast --help)
CLI_COMMANDS = {"inverseflow": "scigen.singlecell.inverseflow.cli:add_commands"}


def __getattr__(name: str):
    if name == "MMSFM":
        from scigen.singlecell.mmsfm.system import MMSFM

        return MMSFM
    if name == "InverseFlow":
        from scigen.singlecell.inverseflow.system import InverseFlow

        return InverseFlow
    raise AttributeError(f"module 'scigen.singlecell' has no attribute {name!r}")
