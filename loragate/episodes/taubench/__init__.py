"""tau2-bench through loragate's episodes (the `tau2` extra): its domains read from the
installed package (`environments`), its own reward (`reward_kind`, the reward kind
`tau2`), its tools as an in-process backend (`backend`), and the import of a domain as
an evalset of episodes (`importer`). Nothing here imports tau2 at module level."""

from loragate.episodes.taubench.environments import DOMAINS, TAU2_VERSION

__all__ = ["DOMAINS", "TAU2_VERSION"]
