"""Graph generation on networkx and PyG: data generators, conversions, I/O, metrics, and G2PT."""

__version__ = "0.1.0"

SYSTEMS = {"g2pt": "scigen.graphs.g2pt.system:G2PT", "sbgd": "scigen.graphs.sbgd.system:SBGD"}

#: extra CLI verbs per system, registered without importing the system class (fast --help)
CLI_COMMANDS = {"g2pt": "scigen.graphs.g2pt.cli:add_commands", "sbgd": "scigen.graphs.sbgd.cli:add_commands"}


def __getattr__(name: str):
    if name == "G2PT":
        from scigen.graphs.g2pt import G2PT

        return G2PT
    if name == "SBGD":
        from scigen.graphs.sbgd import SBGD

        return SBGD
    raise AttributeError(name)


# AGDiff (graph-level anomaly detection), registered beside G2PT
SYSTEMS["agdiff"] = "scigen.graphs.agdiff.system:AGDiff"
CLI_COMMANDS["agdiff"] = "scigen.graphs.agdiff.cli:add_commands"
_AGDIFF_G2PT_GETATTR = __getattr__


def __getattr__(name: str):  # noqa: F811 - extends the G2PT lookup above
    if name == "AGDiff":
        from scigen.graphs.agdiff import AGDiff

        return AGDiff
    return _AGDIFF_G2PT_GETATTR(name)
