"""specgen: size AI workloads into GPU hardware and render infrastructure code for it."""

__version__ = "0.1.0"
