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
