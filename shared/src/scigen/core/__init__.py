"""scigen.core: the shared diffusion / flow-matching / consistency engine.

Time convention everywhere: ``t ∈ [0, 1]``, ``t = 0`` is data and ``t = 1`` the prior (noise).
Import the parts you need (``scigen.core.paths``, ``.samplers``, ``.losses``, ...); importing this
package itself is cheap and loads no optional dependency.
"""

__version__ = "0.1.0"
