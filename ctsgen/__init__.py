"""ctsgen: property-based conformance tests for NVIDIA's cooperative matrix extensions."""

__version__ = "0.1.0"
