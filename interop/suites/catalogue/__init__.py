"""The catalogue suite (docs/CATALOGUE.md)."""

from interop.suites.catalogue.suite import CatalogueSuite

__all__ = ["CatalogueSuite"]
