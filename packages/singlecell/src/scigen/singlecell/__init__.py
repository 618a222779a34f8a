"""Single-cell generative models on AnnData (MMSFM, Inverse Flow, GIM)."""

from scigen.singlecell._version import __version__

__all__ = ["CLI_COMMANDS", "SYSTEMS", "__version__"]

SYSTEMS = {"mmsfm": "scigen.singlecell.mmsfm.system:MMSFM",
           "gim": "scigen.singlecell.gim.system:GIM",
           "inverseflow": "scigen.singlecell.inverseflow.system:InverseFlow"}

#: extra CLI verbs per system, registered without importing the system class (fast --help)
CLI_COMMANDS = {"gim": "scigen.singlecell.gim.cli:add_commands",
                "inverseflow": "scigen.singlecell.inverseflow.cli:add_commands"}


def __getattr__(name: str):
    if name == "MMSFM":
        from scigen.singlecell.mmsfm.system import MMSFM

        return MMSFM
    if name == "GIM":
        from scigen.singlecell.gim.system import GIM

        return GIM
    if name == "InverseFlow":
        from scigen.singlecell.inverseflow.system import InverseFlow

        return InverseFlow
    raise AttributeError(f"module 'scigen.singlecell' has no attribute {name!r}")
